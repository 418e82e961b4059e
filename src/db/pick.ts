/**
 * The named fields of a row, in the order named (the order of the JSON it becomes): for a mapper whose
 * fields keep their column names. A mapper that renames or converts a field writes it out beside.
 */
export function pick<T extends object, const K extends readonly (keyof T)[]>(row: T, keys: K): Pick<T, K[number]> {
  const picked = {} as Pick<T, K[number]>;
  for (const key of keys) picked[key] = row[key];
  return picked;
}
