/** Manifests of the file tools. */
import type { ToolDefinitionInput } from '../../protocol/index.js';

const TAGS = ['files', 'filesystem', 'workspace'];

// What MCP clients are told (tools/list annotations): the readers change nothing; the writers add or change files
// of the workspace and never delete one (destructive: false), and a second identical call is not a no-op.

const path = (description: string, required = true) => ({
  name: 'path',
  type: 'string' as const,
  description,
  required,
});
const limit = (what: string, dflt: number, max: number) => ({
  name: 'limit',
  type: 'integer' as const,
  description: `Most ${what} to return (default ${dflt}, at most ${max}); "truncated" says when more were left out`,
});
const truncatedOut = (what: string) => ({
  name: 'truncated',
  type: 'boolean' as const,
  description: `True when ${what} were left out`,
});

export const READ_FILE: ToolDefinitionInput = {
  name: 'read_file',
  mcp: { annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false } },
  description:
    'Read a file of the workspace: as UTF-8 text by lines (refused if the file is not valid UTF-8), or as raw bytes in base64. Reads at most tools.fs.max_read_bytes per call; continue with next_offset.',
  input_parameters: [
    path('File path, relative to the workspace root (absolute paths only inside it)'),
    {
      name: 'offset',
      type: 'integer',
      description:
        'utf8: first line to return, counting from 1 (default 1). base64: first byte, counting from 0 (default 0)',
    },
    {
      name: 'limit',
      type: 'integer',
      description: 'utf8: most lines to return. base64: most bytes to return. Default: up to tools.fs.max_read_bytes',
    },
    {
      name: 'encoding',
      type: 'string',
      description: '"utf8" (default) for text, "base64" for any bytes',
      enum: ['utf8', 'base64'],
    },
  ],
  output_parameters: [
    { name: 'path', type: 'string', description: 'The file, relative to the workspace' },
    { name: 'encoding', type: 'string', description: 'Encoding of content', enum: ['utf8', 'base64'] },
    { name: 'content', type: 'string', description: 'The lines (newlines kept) or the bytes in base64' },
    { name: 'size', type: 'integer', description: 'Size of the whole file in bytes' },
    { name: 'offset', type: 'integer', description: 'First line (utf8) or byte (base64) returned' },
    { name: 'count', type: 'integer', description: 'Lines (utf8) or bytes (base64) returned' },
    {
      name: 'next_offset',
      type: 'integer',
      description: 'Offset to pass to read the rest; null at the end of the file',
    },
    truncatedOut('bytes beyond tools.fs.max_read_bytes'),
  ],
  tags: [...TAGS, 'read'],
  idempotent: true,
  streaming: false,
  kind: 'native',
};

export const WRITE_FILE: ToolDefinitionInput = {
  name: 'write_file',
  mcp: { annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false } },
  description:
    'Write a whole file in the workspace atomically (a temp file renamed into place: readers never see half a file). Creates or replaces it.',
  input_parameters: [
    path('File path, relative to the workspace root'),
    {
      name: 'content',
      type: 'string',
      description: 'The new content (text, or base64 with encoding "base64")',
      required: true,
    },
    {
      name: 'encoding',
      type: 'string',
      description: '"utf8" (default) or "base64" for binary content',
      enum: ['utf8', 'base64'],
    },
    { name: 'create_dirs', type: 'boolean', description: 'Create missing parent directories (default false)' },
    {
      name: 'overwrite',
      type: 'boolean',
      description: 'Replace an existing file (default true); false fails if it exists',
    },
  ],
  output_parameters: [
    { name: 'path', type: 'string', description: 'The file written, relative to the workspace' },
    { name: 'bytes', type: 'integer', description: 'Bytes written' },
    { name: 'created', type: 'boolean', description: 'True when the file did not exist before' },
  ],
  tags: [...TAGS, 'write'],
  idempotent: false,
  streaming: false,
  kind: 'native',
};

export const EDIT_FILE: ToolDefinitionInput = {
  name: 'edit_file',
  mcp: { annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false } },
  description:
    'Replace an exact piece of text in a UTF-8 file of the workspace. old_string must occur exactly once unless replace_all is true; the file is rewritten atomically.',
  input_parameters: [
    path('File path, relative to the workspace root'),
    {
      name: 'old_string',
      type: 'string',
      description: 'The exact text to replace (whitespace and line breaks included)',
      required: true,
    },
    { name: 'new_string', type: 'string', description: 'The text to put in its place', required: true },
    {
      name: 'replace_all',
      type: 'boolean',
      description: 'Replace every occurrence (default false: old_string must be unique)',
    },
  ],
  output_parameters: [
    { name: 'path', type: 'string', description: 'The file edited, relative to the workspace' },
    { name: 'replacements', type: 'integer', description: 'How many occurrences were replaced' },
    { name: 'bytes', type: 'integer', description: 'Size of the file after the edit' },
  ],
  tags: [...TAGS, 'write', 'edit'],
  idempotent: false,
  streaming: false,
  kind: 'native',
};

export const LIST_DIR: ToolDefinitionInput = {
  name: 'list_dir',
  mcp: { annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false } },
  description: 'List a directory of the workspace, optionally recursively. Symlinks are listed, not followed.',
  input_parameters: [
    path('Directory path, relative to the workspace root ("." for the root)'),
    { name: 'recursive', type: 'boolean', description: 'Also list subdirectories, depth first (default false)' },
    {
      name: 'sizes',
      type: 'boolean',
      description:
        "Also give each file's size in bytes (default false: it costs one more system call per file, several times the listing itself)",
    },
    limit('entries', 1000, 10000),
  ],
  output_parameters: [
    { name: 'path', type: 'string', description: 'The directory, relative to the workspace' },
    {
      name: 'entries',
      type: 'array',
      description:
        'Entries: {path (relative to the workspace), type ("file", "dir", "symlink", "other")}, and with sizes: true also size (bytes for a file, else null)',
    },
    truncatedOut('entries beyond the limit'),
  ],
  tags: [...TAGS, 'read', 'list'],
  idempotent: true,
  streaming: false,
  kind: 'native',
};

export const GLOB: ToolDefinitionInput = {
  name: 'glob',
  mcp: { annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false } },
  description:
    'Find files of the workspace whose path matches a glob pattern ("**/*.ts", "src/*.{js,json}"). Dotfiles match only when the pattern names them. Emits status events while scanning.',
  input_parameters: [
    {
      name: 'pattern',
      type: 'string',
      description: 'Glob pattern, relative to path ("**" for any depth)',
      required: true,
    },
    path('Directory to search from, relative to the workspace root (default ".")', false),
    limit('matches', 1000, 10000),
  ],
  output_parameters: [
    { name: 'path', type: 'string', description: 'The directory searched' },
    { name: 'matches', type: 'array', description: 'Matching file paths, relative to the workspace' },
    truncatedOut('matches beyond the limit (or entries beyond the scan bound)'),
  ],
  tags: [...TAGS, 'read', 'search', 'glob'],
  idempotent: true,
  streaming: true,
  kind: 'native',
};

export const GREP: ToolDefinitionInput = {
  name: 'grep',
  mcp: { annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false } },
  description:
    'Search the text files below a path for a regular expression (JavaScript syntax), line by line. Binary files and files over tools.fs.max_read_bytes are skipped. Emits status events while searching.',
  input_parameters: [
    {
      name: 'pattern',
      type: 'string',
      description: 'Regular expression (JavaScript syntax), matched against each line',
      required: true,
    },
    path('File or directory to search, relative to the workspace root (default ".")', false),
    {
      name: 'include',
      type: 'string',
      description: 'Only files matching this glob (e.g. "*.ts"; without "/" it matches the file name)',
    },
    { name: 'ignore_case', type: 'boolean', description: 'Case-insensitive matching (default false)' },
    limit('matches', 100, 1000),
  ],
  output_parameters: [
    {
      name: 'matches',
      type: 'array',
      description: 'Matches: {path (relative to the workspace), line (from 1), text (the line, cut when very long)}',
    },
    { name: 'files_searched', type: 'integer', description: 'Text files searched' },
    { name: 'files_skipped', type: 'integer', description: 'Files skipped: binary, too large or unreadable' },
    truncatedOut('matches beyond the limit'),
  ],
  tags: [...TAGS, 'read', 'search', 'grep'],
  idempotent: true,
  streaming: true,
  kind: 'native',
};
