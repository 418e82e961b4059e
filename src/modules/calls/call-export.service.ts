import { callerIdentity, type AuthContext } from '../../auth/auth-context.js';
import type { Clock } from '../../clock.js';
import type { ReadRouting } from '../../db/replicas.js';
import { AppError } from '../../errors/index.js';
import type { StreamedBody } from '../../api/streamed-body.js';
import { z } from '../../openapi/zod.js';
import type { AgentAccess } from '../agents/agent-access.js';
import { csvHeader, csvLine, EXPORT_BATCH_BYTES, EXPORT_FORMATS, EXPORTS_PER_KEY, ndjsonLine } from './call-export.js';
import type { CallRepository } from './call.repository.js';
import type { ExportSlotRepository } from './call-export-slots.repository.js';
import { parseCallsQuery } from './call.service.js';
import { callFilterShape, checkedRange } from './call.schemas.js';

/** How long an export's slot stays held without renewal: a dead instance's slots are free after this. */
export const EXPORT_LEASE_SECONDS = 30;
const RENEW_EVERY_MS = 10_000;

export const CallExportQuery = z
  .object({
    format: z.enum(EXPORT_FORMATS, { message: 'Must be ndjson or csv' }).default('ndjson'),
    ...callFilterShape,
  })
  .superRefine((q, ctx) => {
    checkedRange(q, ctx);
  });

export type CallExport = StreamedBody & { contentType: string; filename: string };

class ExportLimitError extends AppError {
  constructor() {
    super(
      'RATE_LIMITED',
      429,
      `At most ${EXPORTS_PER_KEY} exports run at once per API key; try again when one has finished`,
      undefined,
      { 'Retry-After': '10' },
    );
  }
}

/** Streams every call matching the list's filters as NDJSON or CSV (calls:read). */
export class CallExportService {
  constructor(
    private readonly calls: CallRepository,
    private readonly slots: ExportSlotRepository,
    private readonly access: AgentAccess,
    private readonly clock: Clock,
    /** Exports read from a replica (DATABASE_REPLICA_URLS) when there is a healthy one. */
    private readonly reads?: ReadRouting,
  ) {}

  async open(auth: AuthContext, agentId: string, query: unknown): Promise<CallExport> {
    const agent = await this.access.resolve(auth, agentId, 'calls:read');
    const { format, ...filters } = parseCallsQuery(CallExportQuery, agent, query);
    const caller = callerIdentity(auth);
    // Counted across instances (call_export_slots); the slot is a lease renewed while the export runs.
    const held = await this.slots.take(caller, EXPORTS_PER_KEY, EXPORT_LEASE_SECONDS);
    if (!held) throw new ExportLimitError();
    const slots = this.slots;
    const renewal = setInterval(() => {
      // A failed renewal leaves the lease to run out; the export itself goes on.
      slots.renew(held, EXPORT_LEASE_SECONDS).catch(() => undefined);
    }, RENEW_EVERY_MS);
    renewal.unref();
    const fields = agent.analysis_fields ?? [];
    const day = this.clock.now().toISOString().slice(0, 10);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      clearInterval(renewal);
      // Should the database not answer now, the lease runs out instead.
      slots.release(held).catch(() => undefined);
    };
    const calls = this.calls;
    // One replica for the whole export while it stays healthy; the primary for the rest otherwise.
    const on = this.reads?.statements(auth);
    /** The body after the CSV header, one string per batch. */
    async function* lines(): AsyncGenerator<string> {
      if (format === 'csv')
        for await (const rows of calls.exportRows(agent, filters, EXPORT_BATCH_BYTES, on))
          yield rows.map((row) => csvLine(row, fields)).join('');
      else
        for await (const rows of calls.exportListRows(agent, filters, EXPORT_BATCH_BYTES, on))
          yield rows.map(ndjsonLine).join('');
    }
    async function* chunks(): AsyncGenerator<string> {
      try {
        // The header goes with the first batch: a failure in its query is still an error answer.
        let header = format === 'csv' ? csvHeader(fields) : '';
        for await (const batch of lines()) {
          yield header + batch;
          header = '';
        }
        if (header !== '') yield header;
      } finally {
        release();
      }
    }
    return {
      contentType: format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson',
      filename: `calls-${agent.id}-${day}.${format === 'csv' ? 'csv' : 'ndjson'}`,
      chunks: chunks(),
      close: release,
    };
  }

  /** Exports running now for this caller, in every instance (for tests and metrics). */
  async runningFor(auth: AuthContext): Promise<number> {
    return this.slots.held(callerIdentity(auth));
  }
}
