/**
 * How the gateway compares email addresses (accounts' `emails`, the portal's sign-in, sessions):
 * the one rule, in one place. An address is compared as written, except that the ASCII letters
 * A–Z are taken as a–z. Nothing else is folded or normalised: no Unicode case mapping (which
 * turns KELVIN SIGN U+212A into `k`, so `\u212Aate@…` would reach the account of `kate@…`), no
 * Unicode normalisation (composed and decomposed forms are different strings), no trimming of
 * spaces. So two addresses meet one account only when they differ in the case of ASCII letters,
 * which every mail system treats as one mailbox; an address with other characters signs in only
 * when the identity provider sends exactly the code points the account lists.
 */

/** The form an address is stored and looked up in: A–Z lower-cased, every other character kept. */
export const emailKey = (address: string): string => address.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());

/** Whether two addresses name the same identity (see emailKey). */
export const sameEmail = (a: string, b: string): boolean => emailKey(a) === emailKey(b);
