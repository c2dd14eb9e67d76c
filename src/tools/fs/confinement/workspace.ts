/**
 * Path confinement for the file tools, in two steps:
 *
 * 1. Resolution. The caller's path is resolved against the workspace, symlinks
 *    with realpath (of the parent for a file that does not exist yet), and the
 *    result must lie inside realpath(root), compared component-wise so that a
 *    sibling like "/srv/workspace2" is not inside "/srv/workspace".
 * 2. Use. The resolved path is only a list of names: every operation walks
 *    them from the root's descriptor with O_NOFOLLOW|O_DIRECTORY (dir.ts), so
 *    a component swapped for a symlink since step 1 makes the call fail, never
 *    reach outside. An opened file's real location is checked once more.
 */
import { closeSync, constants, readlinkSync, type Stats } from 'node:fs';
import { access, lstat, mkdir, open, realpath, type FileHandle } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ToolError } from '../../../engine/index.js';
import { at, DIR_FLAGS, notADirectory, openChild, openRootDir, type Dir } from './dir.js';
import { listDirectory, openAndRead, type OpenedFile, type RawListing } from '../threads/sync-threads.js';

/** A path inside the workspace: its real absolute location and how to show it to the caller. */
export interface WorkspacePath {
  /** Real absolute path (symlinks resolved, or the real parent + the new name). */
  real: string;
  /** Path relative to the workspace root, with "/" separators ("." for the root). */
  shown: string;
  /** The real path's components below the root ([] for the root): what the descriptor walk opens. */
  rel: readonly string[];
}

/**
 * How a file is opened for reading: O_NONBLOCK keeps a FIFO from blocking the open; O_NOFOLLOW refuses a
 * final component that is (or was swapped for) a symlink.
 */
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;

const errno = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | null)?.code;

/** Who owns what the file tools create (see newFileOwner). */
export type Owner = { uid: number; gid: number } | null;

export class Workspace {
  private realRoot = '';
  private rootDir: Dir | null = null;
  private starting: Promise<void> | null = null;
  private users = 0;

  /** `root` is the absolute workspace path (tools.fs.root resolved). */
  constructor(readonly root: string) {}

  /**
   * Create the workspace (mkdir -p), remember its real path and open it. Shared
   * by the plugins that use the workspace: each init() is paired with a close().
   */
  async init(): Promise<void> {
    this.users++;
    this.starting ??= this.open();
    try {
      await this.starting;
    } catch (err) {
      this.users--;
      this.starting = null;
      throw err;
    }
  }

  private async open(): Promise<void> {
    try {
      await mkdir(this.root, { recursive: true });
      this.realRoot = await realpath(this.root);
      this.rootDir = await openRootDir(this.realRoot);
    } catch (err) {
      const why =
        errno(err) === 'EEXIST' || errno(err) === 'ENOTDIR'
          ? 'exists and is not a directory'
          : `cannot be created (${errno(err) ?? 'error'})`;
      throw new Error(`the workspace tools.fs.root (${this.root}) ${why}; set tools.fs.root to a directory`);
    }
    try {
      await access(`/proc/self/fd/${this.rootDir.fd}`);
    } catch {
      await this.rootDir.handle.close();
      this.rootDir = null;
      throw new Error(
        'the file tools need /proc (Linux, with /proc mounted) to work on the workspace race-free; mount /proc or set tools.fs.enabled: false',
      );
    }
  }

  /**
   * Use a root directory opened by someone else: the privilege-separated
   * worker gets the gateway's descriptor (`path` is its /proc/self/fd name),
   * so it needs no search permission on the root's parents.
   */
  async adopt(path: string, realRoot: string): Promise<void> {
    this.realRoot = realRoot;
    this.rootDir = await openRootDir(path);
    this.users++;
    this.starting = Promise.resolve();
  }

  /** The real path of the root (after init). */
  get real(): string {
    return this.realRoot;
  }

  /** Release one init(); the last one closes the root's descriptor. */
  async close(): Promise<void> {
    if (this.users === 0 || --this.users > 0) return;
    const dir = this.rootDir;
    this.rootDir = null;
    this.starting = null;
    await dir?.handle.close();
  }

  /** The root's open directory (never closed by its users). */
  get dir(): Dir {
    if (!this.rootDir) throw new Error('the workspace is not open (plugin not started)');
    return this.rootDir;
  }

  /**
   * Who should own what the file tools create: the workspace root's owner,
   * when the gateway runs as root and the root belongs to someone else (the
   * shell sandbox hands it to an unprivileged user, whose commands must be
   * able to change files written here). Null when nothing needs changing.
   */
  async newFileOwner(): Promise<Owner> {
    if (process.getuid?.() !== 0) return null;
    const st = await this.dir.handle.stat();
    return st.uid === 0 && st.gid === 0 ? null : { uid: st.uid, gid: st.gid };
  }

  /** Is the real absolute path `p` the root or below it? Separator-aware, never a string prefix test. */
  contains(p: string): boolean {
    return isInside(this.realRoot, p);
  }

  /** The caller-facing name of a real path inside the workspace. */
  show(real: string): string {
    const rel = relative(this.realRoot, real);
    return rel === '' ? '.' : rel.split(sep).join('/');
  }

  /** A real path inside the root as a WorkspacePath. */
  private at(real: string): WorkspacePath {
    const rel = relative(this.realRoot, real);
    return { real, shown: rel === '' ? '.' : rel.split(sep).join('/'), rel: rel === '' ? [] : rel.split(sep) };
  }

  /**
   * Lexical resolution of the caller's path: relative paths are taken from the
   * root; absolute ones are accepted only inside it.
   */
  private lexical(input: string): string {
    if (input.includes('\0')) throw new ToolError(`path ${JSON.stringify(input)} contains a NUL byte`);
    const given = input === '' ? '.' : input;
    if (isAbsolute(given)) {
      const abs = resolve(given);
      for (const base of [this.root, this.realRoot]) {
        if (isInside(base, abs)) return join(this.realRoot, relative(base, abs));
      }
      throw escapes(input);
    }
    const abs = resolve(this.realRoot, given);
    if (!this.contains(abs)) throw escapes(input);
    return abs;
  }

  /** An existing path: symlinks resolved, must stay inside. */
  async existing(input: string): Promise<WorkspacePath> {
    const abs = this.lexical(input);
    let real: string;
    try {
      real = await realpath(abs);
    } catch (err) {
      throw this.fsError(err, input);
    }
    if (!this.contains(real)) throw escapes(input);
    return this.at(real);
  }

  /**
   * The lexical components of an existing path below the root, when the descriptor walk over them will
   * prove where it is: null for the root itself. Throws as `existing` for a path that escapes lexically.
   */
  private direct(input: string): WorkspacePath | null {
    const abs = this.lexical(input);
    const rel = relative(this.realRoot, abs);
    if (rel === '') return null;
    const names = rel.split(sep);
    return { real: abs, shown: names.join('/'), rel: names };
  }

  /**
   * read_file's fast path, one trip to a helper thread (sync-threads.ts) instead of a realpath and five
   * threadpool round trips: the path's lexical components are opened from the root's descriptor, the
   * directories with O_NOFOLLOW|O_DIRECTORY and the file with O_NOFOLLOW|O_NONBLOCK (openRegularAt's
   * flags), so a path that opens this way has no symlink on it and is where its names say: realpath has
   * nothing to resolve. The file is read only if fstat says it is a regular file, and its bytes are used
   * only once its real location (/proc/self/fd) is checked to be inside the root, as openRegularAt does.
   *
   * Null when the path does not open that way (a symlink on it, something missing, not a regular file, an
   * error): then existing() + openRegular() do it the long way and give the precise error. A kept-open
   * descriptor (`read.keepOpen`) is the caller's to close.
   */
  async openAndRead(
    input: string,
    read: { position: number; max: number; slack: number; keepOpen: boolean },
  ): Promise<{ p: WorkspacePath; file: OpenedFile } | null> {
    const p = this.direct(input);
    if (!p) return null;
    let file;
    try {
      file = await openAndRead(this.dir.fd, p.rel, DIR_FLAGS, READ_FLAGS, read);
    } catch {
      return null; // the helper thread died: the long way
    }
    if (file.kind !== 'file') return null;
    if (!this.contains(file.real.replace(/ \(deleted\)$/, ''))) {
      if (file.fd !== null) closeSync(file.fd);
      throw escapes(input);
    }
    return { p, file };
  }

  /**
   * list_dir's fast path for one directory, in one trip to a helper thread: its lexical components are
   * opened from the root's descriptor with O_NOFOLLOW|O_DIRECTORY (as openDir does, so a path that opens
   * this way has no symlink on it) and it is read through the last one (sync-threads.ts). Null when it
   * does not open that way: then existing() + openDir() do it the long way and give the precise error.
   */
  async listDirect(input: string, sizes: boolean): Promise<{ shown: string; listing: RawListing } | null> {
    const p = this.direct(input) ?? { real: this.realRoot, shown: '.', rel: [] };
    try {
      return { shown: p.shown, listing: await listDirectory(this.dir.fd, p.rel, DIR_FLAGS, sizes) };
    } catch {
      return null;
    }
  }

  /**
   * A path to write: the file itself may not exist yet, its parent must (unless
   * `createDirs`, then the missing directories are created inside the root).
   * If the file exists as a symlink, its target must be inside the root and is
   * what gets written.
   */
  async forWrite(input: string, createDirs: boolean): Promise<WorkspacePath> {
    const abs = this.lexical(input);
    if (abs === this.realRoot)
      throw new ToolError('path is the workspace root itself, which is a directory; name a file');
    const parent = await this.parentDir(abs, input, createDirs);
    const candidate = join(parent, basename(abs));
    let target = candidate;
    try {
      const st = await lstat(candidate);
      if (st.isSymbolicLink()) {
        try {
          target = await realpath(candidate);
        } catch {
          throw new ToolError(
            `${this.show(candidate)} is a symlink to a missing or inaccessible target; remove it or write elsewhere`,
          );
        }
        if (!this.contains(target)) throw escapes(input);
      }
    } catch (err) {
      if (errno(err) !== 'ENOENT') throw err instanceof ToolError ? err : this.fsError(err, input);
    }
    return this.at(target);
  }

  /** Real path of the parent directory of `abs`, created inside the root when asked. */
  private async parentDir(abs: string, input: string, createDirs: boolean): Promise<string> {
    const parent = dirname(abs);
    try {
      const real = await realpath(parent);
      if (!this.contains(real)) throw escapes(input);
      return real;
    } catch (err) {
      if (err instanceof ToolError) throw err;
      if (errno(err) !== 'ENOENT') throw this.fsError(err, input);
    }
    if (!createDirs) {
      throw new ToolError(`directory ${this.show(parent)} does not exist; create it first or pass create_dirs: true`);
    }
    // Find the deepest existing ancestor, check it, then create the rest below it, through descriptors.
    const missing: string[] = [];
    let ancestor = parent;
    for (;;) {
      missing.unshift(basename(ancestor));
      ancestor = dirname(ancestor);
      let real: string;
      try {
        real = await realpath(ancestor);
      } catch (err) {
        if (errno(err) === 'ENOENT') continue;
        throw this.fsError(err, input);
      }
      if (!this.contains(real)) throw escapes(input);
      const dir = await this.makeDirs([...this.at(real).rel, ...missing], await this.newFileOwner(), input);
      await dir.close();
      return join(real, ...missing);
    }
  }

  /**
   * Open the directory `rel` below the root, creating what is missing: each
   * component is made (mkdir) and opened through its parent's descriptor, and
   * a new one is handed to `owner` with fchown on its own descriptor. A
   * component that exists but is not a directory (or is a symlink) fails.
   */
  async makeDirs(rel: readonly string[], owner: Owner, input: string): Promise<Dir> {
    let dir = this.dir;
    try {
      for (const name of rel) {
        let made = false;
        try {
          await mkdir(at(dir.fd, name));
          made = true;
        } catch (err) {
          if (errno(err) !== 'EEXIST') throw this.fsError(err, input);
        }
        let child: Dir;
        try {
          child = await openChild(dir, name);
        } catch (err) {
          if (notADirectory(err) || errno(err) === 'ENOENT') {
            throw new ToolError(
              `${JSON.stringify(input)}: a component (${JSON.stringify(name)}) exists and is not a directory, or changed while it was created`,
            );
          }
          throw this.fsError(err, input);
        }
        await dir.close();
        dir = child;
        if (made && owner) await dir.handle.chown(owner.uid, owner.gid);
      }
      return dir;
    } catch (err) {
      await dir.close();
      throw err;
    }
  }

  /** Open the directory at `rel` below the root by descriptors (O_NOFOLLOW at every step). Close it after use. */
  async openDir(p: WorkspacePath): Promise<Dir> {
    let dir = this.dir;
    let depth = 0;
    try {
      for (const name of p.rel) {
        const child = await openChild(dir, name);
        await dir.close();
        dir = child;
        depth++;
      }
      return dir;
    } catch (err) {
      await dir.close();
      if (!notADirectory(err)) throw this.fsError(err, p.shown);
      throw depth === p.rel.length - 1 ? new ToolError(`${p.shown} is not a directory`) : changed(p.shown);
    }
  }

  /** The parent directory of `p` (open; close it after use) and `p`'s name in it. `p` must not be the root. */
  async openParent(p: WorkspacePath): Promise<{ dir: Dir; name: string }> {
    const name = p.rel[p.rel.length - 1];
    if (name === undefined) throw new ToolError('path is the workspace root itself, which is a directory; name a file');
    const dir = await this.openDir({ ...p, rel: p.rel.slice(0, -1) });
    return { dir, name };
  }

  /** lstat of a workspace path, through its parent's descriptor. */
  async lstat(p: WorkspacePath): Promise<Stats> {
    if (p.rel.length === 0) return this.dir.handle.stat();
    const { dir, name } = await this.openParent(p);
    try {
      return await lstat(at(dir.fd, name));
    } catch (err) {
      throw this.fsError(err, p.shown);
    } finally {
      await dir.close();
    }
  }

  /** Open a regular file for reading, through its parent's descriptor. */
  async openRegular(p: WorkspacePath): Promise<{ handle: FileHandle; stats: Stats }> {
    if (p.rel.length === 0) throw new ToolError(`${p.shown} is a directory; use list_dir to see what it holds`);
    const { dir, name } = await this.openParent(p);
    try {
      return await this.openRegularAt(at(dir.fd, name), p.shown);
    } finally {
      await dir.close();
    }
  }

  /**
   * Open a regular file for reading by its descriptor-relative name (dir.ts
   * `at`). O_NONBLOCK keeps a FIFO from blocking the open; O_NOFOLLOW refuses
   * a final component swapped for a symlink; fstat then refuses anything but
   * a regular file, and the opened file's real location is checked once more.
   */
  async openRegularAt(path: string, shown: string): Promise<{ handle: FileHandle; stats: Stats }> {
    let handle: FileHandle;
    try {
      handle = await open(path, READ_FLAGS);
    } catch (err) {
      throw this.fsError(err, shown);
    }
    try {
      const stats = await handle.stat();
      if (stats.isDirectory()) throw new ToolError(`${shown} is a directory; use list_dir to see what it holds`);
      if (!stats.isFile())
        throw new ToolError(
          `${shown} is not a regular file (FIFO, socket or device); only regular files can be read or written`,
        );
      await this.checkOpened(handle, shown);
      return { handle, stats };
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  /**
   * Check via /proc/self/fd that an open file really lies inside the root (defence in depth after the walk).
   * Read synchronously: the link of an open descriptor in /proc is made from the kernel's in-memory dentry
   * (d_path), it never waits on a disk or a network file system, so it costs less than a threadpool trip.
   */
  async checkOpened(handle: FileHandle, shown: string): Promise<void> {
    const real = readlinkSync(`/proc/self/fd/${handle.fd}`);
    if (!this.contains(real.replace(/ \(deleted\)$/, ''))) throw escapes(shown);
  }

  /** A ToolError for a failed file system call, naming only the caller's path. */
  fsError(err: unknown, shown: string): ToolError {
    const name = JSON.stringify(shown);
    switch (errno(err)) {
      case 'ENOENT':
        return new ToolError(`${name} does not exist in the workspace; use list_dir or glob to find the right path`);
      case 'ENOTDIR':
        return new ToolError(`a component of ${name} is not a directory`);
      case 'EISDIR':
        return new ToolError(`${name} is a directory`);
      case 'EACCES':
      case 'EPERM':
        return new ToolError(`permission denied for ${name}`);
      case 'ENXIO':
      case 'ENODEV':
        return new ToolError(
          `${shown} is not a regular file (FIFO, socket or device); only regular files can be read or written`,
        );
      case 'ELOOP':
        return changed(shown);
      case 'ENOSPC':
        return new ToolError('no space left on the device holding the workspace');
      case 'EROFS':
        return new ToolError('the workspace is on a read-only file system');
      case 'ENAMETOOLONG':
        return new ToolError(`${name} is too long`);
      default:
        return new ToolError(`file system error on ${name} (${errno(err) ?? 'unknown'})`);
    }
  }
}

/** Is `p` equal to `base` or below it? Compares whole path components ("/a/bc" is not inside "/a/b"). */
export function isInside(base: string, p: string): boolean {
  const rel = relative(base, p);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** A component was swapped (for a symlink or a file) between resolution and use: refused, not followed. */
function changed(shown: string): ToolError {
  return new ToolError(
    `${JSON.stringify(shown)} is (or passes through) a symlink, or changed while it was being used; it cannot be used`,
  );
}

function escapes(input: string): ToolError {
  // An absolute path is not repeated: it would show the caller host paths outside the workspace.
  const subject = isAbsolute(input) ? 'absolute path' : `path ${JSON.stringify(input)}`;
  return new ToolError(
    `${subject} escapes the workspace root; use a path relative to the workspace (e.g. "notes/todo.txt")`,
  );
}
