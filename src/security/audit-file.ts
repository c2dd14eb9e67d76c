/**
 * The audit file: one JSON line per call attempt, appended in order by one
 * writer, rotated by size (file → file.1 → … → file.N). JSON encoding
 * escapes every control character, so no field value can start a new line.
 * Written off the request path: records are queued and flushed in batches.
 */
import { mkdirSync } from 'node:fs';
import { open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { AuditRecord, AuditSink, Logger } from '../engine/index.js';

/** The line written for a record: a fixed field order, the token's name (never its value), no arguments. */
export function auditLine(r: AuditRecord): string {
  return `${JSON.stringify({
    ts: r.ts,
    session_id: r.session_id,
    token: r.principal,
    req_id: r.req_id,
    correlation_id: r.correlation_id,
    tool_name: r.tool_name,
    kind: r.kind,
    success: r.success,
    error_code: r.error_code,
    duration_ms: r.duration_ms,
    input_bytes: r.input_bytes,
    output_bytes: r.output_bytes,
    door: r.door,
    // An approval's outcome (the one record with argument values: what was asked and what was approved).
    ...(r.approval ? { approval: r.approval } : {}),
  })}\n`;
}

export interface AuditFileOptions {
  path: string;
  maxBytes: number;
  keep: number;
  logger: Logger;
}

export interface AuditFile {
  sink: AuditSink;
  /** Resolves once every queued record is on disk. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export function openAuditFile(options: AuditFileOptions): AuditFile {
  const { path, maxBytes, keep, logger } = options;
  // Fail at start, not at the first call, when the directory cannot exist.
  mkdirSync(dirname(path), { recursive: true });
  let queue: string[] = [];
  let handle: FileHandle | undefined;
  let size = 0;
  let writing: Promise<void> | undefined;
  let closed = false;

  const ensureOpen = async () => {
    if (handle) return handle;
    handle = await open(path, 'a', 0o600);
    size = (await stat(path)).size;
    return handle;
  };

  const rotate = async () => {
    await handle?.close();
    handle = undefined;
    if (keep === 0) await rm(path, { force: true });
    else {
      for (let i = keep - 1; i >= 1; i--) await rename(`${path}.${i}`, `${path}.${i + 1}`).catch(() => {});
      await rename(path, `${path}.1`);
    }
  };

  const drain = async () => {
    while (queue.length) {
      const lines = queue;
      queue = [];
      let next = 0;
      try {
        // A batch is split at the size limit, so a file never grows more than one record past audit.max_bytes,
        // however many records queued up while the previous write was on its way.
        while (next < lines.length) {
          const h = await ensureOpen();
          let text = '';
          let bytes = 0;
          while (next < lines.length && size + bytes < maxBytes) {
            text += lines[next];
            bytes += Buffer.byteLength(lines[next]!);
            next++;
          }
          if (bytes > 0) await h.write(text);
          size += bytes;
          if (size >= maxBytes) await rotate();
        }
      } catch (err) {
        logger.error({ err, path }, `audit file write failed; ${lines.length - next} record(s) lost`);
      }
    }
  };

  const kick = () => {
    writing ??= drain().finally(() => {
      writing = undefined;
      if (queue.length && !closed) kick();
    });
  };

  return {
    sink: (record) => {
      if (closed) return;
      queue.push(auditLine(record));
      kick();
    },
    async flush() {
      while (writing || queue.length) {
        if (!writing) kick();
        await writing;
      }
    },
    async close() {
      await this.flush();
      closed = true;
      await handle?.close();
      handle = undefined;
    },
  };
}
