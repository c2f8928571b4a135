/**
 * A table row as JSON carries it (a `json_to_recordset` parameter on the way in): the generated
 * column types, with timestamps as ISO text and the named numeric columns as numbers (pg hands
 * numeric to JavaScript as text, JSON carries it as a number). Derived, so a renamed, dropped or
 * retyped column fails to compile wherever such a row is built.
 */
export type JsonRow<Row, Numeric extends keyof Row = never> = {
  [K in keyof Row]: K extends Numeric ? AsNumber<Row[K]> : Exclude<Row[K], null> extends Date ? AsText<Row[K]> : Row[K];
};
type AsNumber<T> = null extends T ? number | null : number;
type AsText<T> = null extends T ? string | null : string;
