-- The archive's manifest (docs/archive.md): one row per file written, (day, dataset, format). A row
-- is inserted in the transaction that holds the (day, dataset) lock, after both files were written
-- aside, fsynced and renamed into place, so the manifest lists only whole files. `content_sha256`
-- is the digest of the rows (the uncompressed NDJSON): a rerun whose rows are the same leaves the
-- files as they are. GET /api/v1/exports reads it newest day first, then dataset and format.
create table archive_files (
  day             date not null,
  dataset         text not null,
  format          text not null check (format in ('parquet', 'ndjson.gz')),
  rows            bigint not null check (rows >= 0),
  bytes           bigint not null check (bytes > 0),
  sha256          text not null check (sha256 ~ '^[0-9a-f]{64}$'),
  content_sha256  text not null check (content_sha256 ~ '^[0-9a-f]{64}$'),
  schema_version  integer not null,
  made_at         timestamptz not null default now(),
  primary key (day, dataset, format)
);
create index archive_files_newest on archive_files (day desc, dataset, format);
