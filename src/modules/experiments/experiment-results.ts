import type { AnalysisField } from '../agents/analysis-fields.js';
import { isCountedType } from '../calls/extracted-filters.js';
import { twoProportionPValue, wilsonInterval } from './experiment-statistics.js';
import type { ExperimentRow, VariantResultRow } from './experiment.repository.js';
import type { ExperimentResults, ExperimentVariantResult } from './experiment.schemas.js';

/**
 * The outcome fields whose distribution the results show: the enum and boolean fields, the same
 * rule that decides which fields call statistics count per value (`isCountedType`).
 */
export function distributedFields(fields: readonly AnalysisField[]): AnalysisField[] {
  return fields.filter((field) => isCountedType(field.type));
}

function declaredValues(field: AnalysisField): string[] {
  return field.type === 'boolean' ? ['true', 'false'] : [...(field.values ?? [])];
}

/**
 * The answer of GET .../experiments/{id}/results from the aggregated rows: every variant in the
 * experiment's order (zeros without calls), its done rate with the 95% Wilson interval and the
 * two-proportion test against the first variant, and the distribution of each field in `fields`.
 */
export function assembleResults(
  experiment: Pick<ExperimentRow, 'id' | 'status' | 'calls' | 'variants'>,
  fields: readonly AnalysisField[],
  rows: readonly VariantResultRow[],
): ExperimentResults {
  const totals = new Map<string, VariantResultRow>();
  const values = new Map<string, Map<string, Map<string, number>>>();
  for (const row of rows) {
    if (row.field === null) {
      totals.set(row.variant, row);
      continue;
    }
    const byField = values.get(row.variant) ?? new Map<string, Map<string, number>>();
    values.set(row.variant, byField);
    const byValue = byField.get(row.field) ?? new Map<string, number>();
    byField.set(row.field, byValue);
    byValue.set(row.value ?? '', (byValue.get(row.value ?? '') ?? 0) + row.calls);
  }
  const variants = experiment.variants.map((variant): ExperimentVariantResult => {
    const total = totals.get(variant.name);
    const calls = total?.calls ?? 0;
    const done = total?.done ?? 0;
    const outcomes: ExperimentVariantResult['outcomes'] = {};
    for (const field of fields) {
      const counted = values.get(variant.name)?.get(field.name) ?? new Map<string, number>();
      const distribution: Record<string, number> = {};
      for (const value of declaredValues(field)) distribution[value] = 0;
      let seen = 0;
      for (const [value, n] of counted) {
        distribution[value] = (distribution[value] ?? 0) + n;
        seen += n;
      }
      outcomes[field.name] = { values: distribution, missing: calls - seen };
    }
    return {
      name: variant.name,
      calls,
      done,
      done_rate: calls === 0 ? null : done / calls,
      done_rate_interval: wilsonInterval(done, calls),
      done_rate_p_value: null,
      duration_avg: calls === 0 ? null : (total?.duration_total ?? 0) / calls,
      outcomes,
    };
  });
  const [first, ...others] = variants;
  for (const variant of others)
    variant.done_rate_p_value = twoProportionPValue(first!.done, first!.calls, variant.done, variant.calls);
  return {
    experiment_id: experiment.id,
    status: experiment.status,
    assigned_calls: experiment.calls,
    reported_calls: variants.reduce((sum, v) => sum + v.calls, 0),
    variants,
  };
}
