/**
 * One output rule for terminals and files (issue 23 finding 3 and 12): operator-set text printed by
 * the CLI, sent in webhooks or exported as CSV never carries a raw control, C1 or bidi character,
 * and CSV cells that a spreadsheet would run as formulas are neutralised.
 */
import type { AuditEntry } from '../../gateway/audit/audit-entry';
import { formatEntryLine } from '../../gateway/audit/format-entry';
import { csvCell, fieldSafe, safeJson, terminalSafe } from '../../gateway/output/safe-text';
import { reportCsv } from '../../gateway/usage/usage-reports';
import { eventBody, newEvent } from '../../gateway/webhooks/webhook-event';

// Erase the line, set the window title, set the clipboard (OSC 52), a C1 CSI, DEL, a right-to-left override.
const HOSTILE = 'ok\u001b[2K\r\u001b]0;owned\u0007\u001b]52;c;ZXZpbA==\u0007\u009b31m\u007f\u202eevil\nfake line';
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

describe('terminal and field rules', () => {
  it('escape every control, DEL, C1 and bidi character as \\uXXXX', () => {
    expect(fieldSafe(HOSTILE)).not.toMatch(RAW);
    expect(fieldSafe(HOSTILE)).not.toContain('\n');
    expect(fieldSafe('a\u001bb\u202ec')).toBe('a\\u001bb\\u202ec');
    expect(terminalSafe('line one\n\tline two\u001b')).toBe('line one\n\tline two\\u001b');
    // CSV's line ends stay; a lone carriage return (back to the start of the line) does not.
    expect(terminalSafe('a,b\r\nc\rd')).toBe('a,b\r\nc\\u000dd');
  });

  it('keep JSON valid and its values the same', () => {
    const value = { note: HOSTILE, n: 1 };
    const text = safeJson(value, 2);
    expect(text).not.toMatch(RAW);
    expect(JSON.parse(text)).toEqual(value);
    expect(JSON.parse(terminalSafe(JSON.stringify(value)))).toEqual(value);
  });
});

describe('keys audit lines', () => {
  it('show a hostile note on one line, escaped, and cannot fake an entry', () => {
    const entry: AuditEntry = {
      id: '1-0', time: '2026-11-27T10:00:00.000Z', actor: 'otto\u001b[1A', channel: 'admin_api', action: 'change', key_id: 'k1',
      changes: { note: { before: null, after: HOSTILE } },
    };
    const line = formatEntryLine(entry);
    expect(line).not.toMatch(RAW);
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toContain('note: — → ok\\u001b[2K\\u000d');
  });
});

describe('CSV cells', () => {
  it.each([['=1+1'], ['+1'], ['-2+3'], ['@SUM(A1)'], ['\tx'], ['\rx']])('neutralise %j', (cell) => {
    expect(csvCell(cell).replace(/^"/, '')).toMatch(/^'/);
  });
  it('leave plain cells alone and quote what needs quoting', () => {
    expect(csvCell('acme-1')).toBe('acme-1');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('-a,"b"')).toBe('"\'-a,""b"""');
  });
  it('apply to the monthly report (a key id may start with -)', () => {
    const csv = reportCsv({ month: '2026-11', keys: [{ key_id: '-cmd', accepted: 1, refused: {} }] } as never);
    expect(csv.split('\n')[1]).toMatch(/^'-cmd,1/);
  });
});

describe('webhook bodies', () => {
  it('carry a note\'s value exactly, with no raw control or bidi character', () => {
    const event = newEvent('key.changed', { key_id: 'k1', note: HOSTILE });
    const body = eventBody(event);
    expect(body).not.toMatch(RAW);
    expect(JSON.parse(body)).toEqual({ type: 'key.changed', timestamp: event.timestamp, data: { key_id: 'k1', note: HOSTILE } });
  });
});
