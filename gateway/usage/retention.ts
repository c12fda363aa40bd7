/**
 * How long history is kept. One month's record (its days and so its total) lives until 26 months
 * after the month began: every day is then kept more than 400 days and every month total more
 * than 25 months after the month ended.
 */
export const RETAIN_MONTHS = 26;
