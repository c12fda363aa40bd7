import type { Request, Router } from 'express';
import { parseAuditQuery } from '../../audit/audit-query';
import { ApiError } from '../../errors';
import { monthParam } from '../../usage/usage-query';
import type { ConsoleStore } from '../console-store';
import { sendPage } from '../../http/page-headers';
import { queryOf } from '../forms';
import { auditPage } from '../pages/audit-page';
import { reportPage } from '../pages/report-page';
import { need, signed } from '../signed-in';

/** The pages that read what was recorded: the audit log and the monthly usage report (page and CSV). */
export function addRecordRoutes(router: Router, store: ConsoleStore): void {
  router.get('/audit', need('read'), async (req, res) => {
    const params = queryOf(req);
    const filter = { key_id: params.get('key_id') ?? '', since: params.get('since') ?? '' };
    const page = await store.readAudit(parseAuditQuery(params));
    sendPage(res, 200, auditPage(signed(res).ctx, page, filter, `Changes to ${store.source}, newest first.`));
  });

  // The admin API's check of the month (this month when none is given).
  const reportMonth = (req: Request): string => monthParam(queryOf(req).get('month') ?? new Date().toISOString().slice(0, 7));
  const reports = (): Required<Pick<ConsoleStore, 'report' | 'reportCsv'>> => {
    if (!store.report || !store.reportCsv) throw new ApiError('not_found', {}, undefined, 'Usage is not recorded by this gateway.');
    return { report: store.report, reportCsv: store.reportCsv };
  };
  router.get('/reports/monthly', need('read'), async (req, res) => {
    sendPage(res, 200, reportPage(signed(res).ctx, await reports().report(reportMonth(req))));
  });
  router.get('/reports/monthly.csv', need('read'), async (req, res) => {
    const month = reportMonth(req);
    const { report, reportCsv } = reports();
    res.status(200).type('text/csv; charset=utf-8').set('Content-Disposition', `attachment; filename="usage-${month}.csv"`).send(reportCsv(await report(month)));
  });
}
