import type { Knex } from 'knex';

/** A call's employee is an employee row; deleting the employee keeps the call without the link. */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    `UPDATE calls SET employee_id = NULL WHERE employee_id IS NOT NULL AND employee_id NOT IN (SELECT id FROM employees)`,
  );
  await knex.schema.alterTable('calls', (t) => {
    t.foreign('employee_id').references('employees.id').onDelete('SET NULL');
    t.index(['employee_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('calls', (t) => {
    t.dropIndex(['employee_id']);
    t.dropForeign(['employee_id']);
  });
}
