import { Router, type Request } from 'express';
import { ApiError } from '../errors';
import { sendJson } from '../send';
import type { UsageStore } from './usage-model';
import { dailyUsage, monthlyReport, reportCsv } from './usage-reports';
import { queryParams, rawQueryOf } from '../http/query-params';
import { dayRange, monthParam } from './usage-query';

const rawQuery = (req: Request): string => rawQueryOf(req.originalUrl);

/**
 * The admin API's usage paths. `keyExists` tells an unknown id (404) from a key without usage
 * (zeros); a deleted key whose history is still kept is answered too, as billing needs it.
 */
export function createUsageRoutes(store: UsageStore, keyExists: (id: string) => Promise<boolean>): Router {
  const router = Router({ caseSensitive: true, strict: true });

  router.get('/admin/keys/:id/usage/daily', async (req, res) => {
    const id = req.params.id as string;
    const { from, to } = dayRange(queryParams(rawQuery(req), ['from', 'to']));
    const usage = await dailyUsage(store, id, from, to);
    if (!usage.days.some((d) => d.accepted > 0 || Object.keys(d.refused).length > 0) && !(await keyExists(id))) {
      throw new ApiError('not_found', {}, undefined, `No key with id "${id}".`);
    }
    sendJson(res, 200, usage);
  });

  router.get('/admin/reports/monthly', async (req, res) => {
    const month = monthParam(queryParams(rawQuery(req), ['month']).month);
    const report = await monthlyReport(store, month);
    if (req.accepts(['application/json', 'text/csv']) === 'text/csv') {
      const text = reportCsv(report);
      res.status(200);
      res.setHeader('Content-Type', 'text/csv; charset=utf-8');
      res.setHeader('Content-Disposition', `attachment; filename="usage-${month}.csv"`);
      res.setHeader('Content-Length', Buffer.byteLength(text));
      res.end(text);
      return;
    }
    sendJson(res, 200, report);
  });
  return router;
}

/** Paths served here and their methods, for the admin API's 405 answers. */
export const USAGE_PATHS: Readonly<Record<string, string>> = {
  '/admin/keys/:id/usage/daily': 'GET',
  '/admin/reports/monthly': 'GET',
};
