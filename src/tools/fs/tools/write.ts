/** write_file and edit_file: atomic writes (temp file in the same directory, then rename) inside the workspace. */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { link, lstat, open, rename, unlink } from 'node:fs/promises';
import { ToolError } from '../../../engine/index.js';
import { at, type Dir } from '../confinement/dir.js';
import { diskBytes, estimateDiskBytes, type WorkspaceQuota } from '../confinement/quota.js';
import type { Workspace, WorkspacePath } from '../confinement/workspace.js';

export interface WriteArgs {
  path: string;
  content: string;
  encoding?: 'utf8' | 'base64';
  create_dirs?: boolean;
  overwrite?: boolean;
}

export interface EditArgs {
  path: string;
  old_string: string;
  new_string: string;
  replace_all?: boolean;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export async function writeFileTool(
  ws: Workspace,
  args: WriteArgs,
  maxBytes: number,
  quota: WorkspaceQuota,
): Promise<unknown> {
  let data: Buffer;
  if (args.encoding === 'base64') {
    const compact = args.content.replace(/\s+/g, '');
    if (compact.length % 4 === 1 || !BASE64.test(compact)) throw new ToolError('content is not valid base64');
    data = Buffer.from(compact, 'base64');
  } else {
    data = Buffer.from(args.content, 'utf8');
  }
  if (data.length > maxBytes) {
    throw new ToolError(`content is ${data.length} bytes, over the ${maxBytes}-byte limit (tools.fs.max_write_bytes)`);
  }
  const p = await ws.forWrite(args.path, args.create_dirs ?? false);
  const created = await writeAtomic(ws, p, data, args.overwrite ?? true, quota);
  return { path: p.shown, bytes: data.length, created };
}

export async function editFileTool(
  ws: Workspace,
  args: EditArgs,
  limits: { maxRead: number; maxWrite: number },
  quota: WorkspaceQuota,
): Promise<unknown> {
  const { maxRead, maxWrite } = limits;
  if (args.old_string === '')
    throw new ToolError('old_string is empty; give the exact text to replace (use write_file to create a file)');
  if (args.old_string === args.new_string)
    throw new ToolError('old_string and new_string are the same; nothing would change');
  const p = await ws.existing(args.path);
  const { handle, stats } = await ws.openRegular(p);
  let bytes: Buffer;
  try {
    if (stats.size > maxRead) {
      throw new ToolError(
        `${p.shown} is ${stats.size} bytes, over the ${maxRead}-byte limit (tools.fs.max_read_bytes) for editing`,
      );
    }
    bytes = await handle.readFile();
  } finally {
    await handle.close();
  }
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    throw new ToolError(
      `${p.shown} is not valid UTF-8 text; edit_file only edits text files (use write_file with encoding: "base64")`,
    );
  }
  const count = countOccurrences(text, args.old_string);
  if (count === 0) {
    throw new ToolError(
      `old_string was not found in ${p.shown}; read the file and copy the exact text, including whitespace and line breaks`,
    );
  }
  if (count > 1 && !args.replace_all) {
    throw new ToolError(
      `old_string occurs ${count} times in ${p.shown}; include more surrounding text to make it unique, or pass replace_all: true to replace every one`,
    );
  }
  // split/join: a literal replacement (String.replace would interpret "$&" and friends in new_string).
  const updated = args.replace_all
    ? text.split(args.old_string).join(args.new_string)
    : replaceOnce(text, args.old_string, args.new_string);
  const data = Buffer.from(updated, 'utf8');
  if (data.length > maxWrite) {
    throw new ToolError(
      `the edited file would be ${data.length} bytes, over the ${maxWrite}-byte limit (tools.fs.max_write_bytes)`,
    );
  }
  await writeAtomic(ws, p, data, true, quota);
  return { path: p.shown, replacements: args.replace_all ? count : 1, bytes: data.length };
}

function countOccurrences(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) n++;
  return n;
}

function replaceOnce(text: string, needle: string, replacement: string): string {
  const i = text.indexOf(needle);
  return text.slice(0, i) + replacement + text.slice(i + needle.length);
}

/**
 * Write `data` to `p` atomically: a new temp file next to it (O_EXCL, no
 * symlink following, checked to be inside the root once open), fsync, then
 * rename over the target — or link, when overwriting is not allowed, so that
 * a file created meanwhile is never replaced. Readers see the old or the new
 * file, never a half-written one. Every step (and the cleanup of the temp
 * file) goes through the parent directory's descriptor, so a parent swapped
 * for a symlink meanwhile is never written through. Returns whether the file
 * was created.
 */
export async function writeAtomic(
  ws: Workspace,
  p: WorkspacePath,
  data: Buffer,
  overwrite: boolean,
  quota: WorkspaceQuota,
): Promise<boolean> {
  const { dir, name } = await ws.openParent(p);
  try {
    return await writeIn(ws, dir, name, p.shown, data, overwrite, quota);
  } finally {
    await dir.close();
  }
}

async function writeIn(
  ws: Workspace,
  dir: Dir,
  name: string,
  shown: string,
  data: Buffer,
  overwrite: boolean,
  quota: WorkspaceQuota,
): Promise<boolean> {
  let mode = 0o644;
  let exists = false;
  let oldBytes = 0;
  let owner = await ws.newFileOwner();
  try {
    const st = await lstat(at(dir.fd, name));
    if (st.isDirectory()) throw new ToolError(`${shown} is a directory; name a file inside it`);
    if (!st.isFile())
      throw new ToolError(
        `${shown} exists and is not a regular file (or is a symlink that changed meanwhile); only regular files can be written`,
      );
    if (!overwrite) throw new ToolError(`${shown} already exists; pass overwrite: true to replace it`);
    exists = true;
    mode = st.mode & 0o7777;
    oldBytes = diskBytes(st);
    if (owner) owner = { uid: st.uid, gid: st.gid }; // a replaced file keeps its owner
  } catch (err) {
    if (err instanceof ToolError) throw err;
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw ws.fsError(err, shown);
  }
  await quota.reserve(estimateDiskBytes(data.length) - oldBytes, shown);

  const temp = `.${name}.${randomBytes(6).toString('hex')}.tmp`;
  let handle;
  try {
    handle = await open(
      at(dir.fd, temp),
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      mode,
    );
  } catch (err) {
    throw ws.fsError(err, shown);
  }
  let placed = false;
  try {
    await ws.checkOpened(handle, shown);
    await handle.writeFile(data);
    if (exists) await handle.chmod(mode); // keep the old file's permissions (open's mode is filtered by the umask)
    if (owner) await handle.chown(owner.uid, owner.gid);
    await handle.sync();
    const newBytes = diskBytes(await handle.stat());
    await handle.close();
    handle = undefined;
    if (overwrite) {
      await rename(at(dir.fd, temp), at(dir.fd, name));
      placed = true;
    } else {
      try {
        await link(at(dir.fd, temp), at(dir.fd, name));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST')
          throw new ToolError(`${shown} already exists; pass overwrite: true to replace it`);
        throw err;
      }
    }
    quota.add(newBytes - oldBytes);
    return !exists;
  } catch (err) {
    throw err instanceof ToolError ? err : ws.fsError(err, shown);
  } finally {
    await handle?.close();
    if (!placed) await unlink(at(dir.fd, temp)).catch(() => {});
  }
}
