// The part of date-holidays-parser's own types (node_modules/date-holidays-parser/types) this module
// uses: its package.json's `exports` do not name them, so NodeNext resolution does not find them.
declare module 'date-holidays-parser' {
  export type HolidayOptions = { languages?: string | string[]; timezone?: string };
  export type Holiday = { date: string; start: Date; end: Date; name: string; type: string };
  export default class Holidays {
    constructor(data: object, country: string, opts?: HolidayOptions);
    constructor(data: object, country: string, state: string, opts?: HolidayOptions);
    getHolidays(year?: string | number | Date, lang?: string): Holiday[];
  }
}
