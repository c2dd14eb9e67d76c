/**
 * Path confinement for the file tools. Containment is decided on real paths:
 * the caller's path is resolved against the workspace, symlinks are resolved
 * with realpath (of the parent for a file that does not exist yet), and the
 * result must lie inside realpath(root), compared component-wise so that a
 * sibling like "/srv/workspace2" is not inside "/srv/workspace".
 */
import { constants, type Stats } from 'node:fs';
import { chown, lstat, mkdir, open, readlink, realpath, stat, type FileHandle } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ToolError } from '../../engine/index.js';

/** A path inside the workspace: its real absolute location and how to show it to the caller. */
export interface WorkspacePath {
  /** Real absolute path (symlinks resolved, or the real parent + the new name). */
  real: string;
  /** Path relative to the workspace root, with "/" separators ("." for the root). */
  shown: string;
}

const errno = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | null)?.code;

export class Workspace {
  private realRoot = '';

  /** `root` is the absolute workspace path (tools.fs.root resolved). */
  constructor(readonly root: string) {}

  /** Create the workspace (mkdir -p) and remember its real path. */
  async init(): Promise<void> {
    try {
      await mkdir(this.root, { recursive: true });
      this.realRoot = await realpath(this.root);
    } catch (err) {
      const why = errno(err) === 'EEXIST' || errno(err) === 'ENOTDIR' ? 'exists and is not a directory' : `cannot be created (${errno(err) ?? 'error'})`;
      throw new Error(`the workspace tools.fs.root (${this.root}) ${why}; set tools.fs.root to a directory`);
    }
  }

  /**
   * Who should own what the file tools create: the workspace root's owner,
   * when the gateway runs as root and the root belongs to someone else (the
   * shell sandbox hands it to an unprivileged user, whose commands must be
   * able to change files written here). Null when nothing needs changing.
   */
  async newFileOwner(): Promise<{ uid: number; gid: number } | null> {
    if (process.getuid?.() !== 0) return null;
    const st = await stat(this.realRoot);
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
    return { real, shown: this.show(real) };
  }

  /**
   * A path to write: the file itself may not exist yet, its parent must (unless
   * `createDirs`, then the missing directories are created inside the root).
   * If the file exists as a symlink, its target must be inside the root and is
   * what gets written.
   */
  async forWrite(input: string, createDirs: boolean): Promise<WorkspacePath> {
    const abs = this.lexical(input);
    if (abs === this.realRoot) throw new ToolError('path is the workspace root itself, which is a directory; name a file');
    const parent = await this.parentDir(abs, input, createDirs);
    const candidate = join(parent, basename(abs));
    let target = candidate;
    try {
      const st = await lstat(candidate);
      if (st.isSymbolicLink()) {
        try {
          target = await realpath(candidate);
        } catch {
          throw new ToolError(`${this.show(candidate)} is a symlink to a missing or inaccessible target; remove it or write elsewhere`);
        }
        if (!this.contains(target)) throw escapes(input);
      }
    } catch (err) {
      if (errno(err) !== 'ENOENT') throw err instanceof ToolError ? err : this.fsError(err, input);
    }
    return { real: target, shown: this.show(target) };
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
    // Find the deepest existing ancestor, check it, then create the rest below its real path.
    const missing: string[] = [];
    let at = parent;
    for (;;) {
      missing.unshift(basename(at));
      at = dirname(at);
      try {
        const real = await realpath(at);
        if (!this.contains(real)) throw escapes(input);
        let dir = real;
        for (const name of missing) {
          dir = join(dir, name);
          try {
            await mkdir(dir);
            const owner = await this.newFileOwner();
            if (owner) await chown(dir, owner.uid, owner.gid);
          } catch (e) {
            if (errno(e) !== 'EEXIST') throw this.fsError(e, input);
            const st = await lstat(dir);
            if (!st.isDirectory()) throw new ToolError(`${this.show(dir)} exists and is not a directory`);
          }
        }
        return dir;
      } catch (err) {
        if (errno(err) !== 'ENOENT') throw err instanceof ToolError ? err : this.fsError(err, input);
      }
    }
  }

  /**
   * Open a regular file for reading. O_NONBLOCK keeps a FIFO from blocking the
   * open; O_NOFOLLOW refuses a final component swapped for a symlink since it
   * was checked; fstat then refuses anything but a regular file, and the
   * opened file's real location is checked once more through /proc.
   */
  async openRegular(p: WorkspacePath): Promise<{ handle: FileHandle; stats: Stats }> {
    let handle: FileHandle;
    try {
      handle = await open(p.real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
    } catch (err) {
      throw this.fsError(err, p.shown);
    }
    try {
      const stats = await handle.stat();
      if (stats.isDirectory()) throw new ToolError(`${p.shown} is a directory; use list_dir to see what it holds`);
      if (!stats.isFile()) throw new ToolError(`${p.shown} is not a regular file (FIFO, socket or device); only regular files can be read or written`);
      await this.checkOpened(handle, p);
      return { handle, stats };
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  /** Check via /proc/self/fd that an open file really lies inside the root (closes check-then-open races). */
  async checkOpened(handle: FileHandle, p: WorkspacePath): Promise<void> {
    let real: string;
    try {
      real = await readlink(`/proc/self/fd/${handle.fd}`);
    } catch {
      return; // no /proc (not Linux): the realpath check above is what we have
    }
    if (!this.contains(real)) throw escapes(p.shown);
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
        return new ToolError(`${shown} is not a regular file (FIFO, socket or device); only regular files can be read or written`);
      case 'ELOOP':
        return new ToolError(`${name} is (or passes through) a symlink that changed or loops; it cannot be used`);
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

function escapes(input: string): ToolError {
  // An absolute path is not repeated: it would show the caller host paths outside the workspace.
  const subject = isAbsolute(input) ? 'absolute path' : `path ${JSON.stringify(input)}`;
  return new ToolError(`${subject} escapes the workspace root; use a path relative to the workspace (e.g. "notes/todo.txt")`);
}
