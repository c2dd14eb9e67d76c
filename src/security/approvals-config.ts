/**
 * The `approvals` section and the approval rules shared by it, static tokens (`approve`) and JWT rules:
 * which calls wait for a person's approval, how long, and who decides. Referenced from src/config/schema.ts.
 */
import { z } from 'zod';

/** A condition on one argument (its value at the top level of the call's arguments); every key given must hold. */
export const ArgumentCondition = z
  .strictObject({
    /** The argument equals this value. */
    equals: z.union([z.string(), z.number(), z.boolean()]).optional(),
    /** The argument is one of these values. */
    in: z.array(z.union([z.string(), z.number(), z.boolean()])).optional(),
    /** The argument is missing or none of these values (e.g. method not in GET, HEAD). */
    not_in: z.array(z.union([z.string(), z.number(), z.boolean()])).optional(),
    /** The argument is a string matching this glob (`*` within a path segment, `**` across segments, `?` one character). */
    glob: z.string().min(1).optional(),
    /** The argument is missing, not a string, or a string not matching this glob. */
    not_glob: z.string().min(1).optional(),
  })
  .refine((c) => Object.values(c).some((v) => v !== undefined), {
    message: 'give at least one of equals, in, not_in, glob, not_glob',
  });
export type ArgumentCondition = z.output<typeof ArgumentCondition>;

/**
 * A tool rule as in allow/deny (a glob, `tag:NAME`, `kind:NAME`), or `{ tool, when }`: that rule, only when every
 * named argument meets its condition.
 */
export const ApprovalRule = z.union([
  z.string().min(1),
  z.strictObject({
    /** A tool-name glob, `tag:NAME` or `kind:NAME`. */
    tool: z.string().min(1),
    /** Argument name → condition; all must hold. */
    when: z
      .record(z.string().min(1), ArgumentCondition)
      .refine((w) => Object.keys(w).length > 0, { message: 'name at least one argument' }),
  }),
]);
export type ApprovalRule = z.output<typeof ApprovalRule>;

/** Who may decide: by token name (static or a JWT's name claim); admin tokens unless `admins: false`. */
export const ApproversConfig = z.strictObject({
  /** Principal names (auth.tokens[].name, or a JWT's name claim) that may decide. */
  names: z.array(z.string().min(1)).default([]),
  /** Tokens with admin: true may decide. */
  admins: z.boolean().default(true),
});

export const NotifyConfig = z.strictObject({
  /** Webhook URL POSTed a summary of each new pending approval (the SSRF rules of tools.http apply). */
  url: z.url(),
  /** The gateway's address as approvers open it (e.g. https://gateway.example.com): the summary links to its console. */
  console_url: z.url().optional(),
  /** Attempts per approval (with backoff) before the failure is logged and dropped. */
  attempts: z.int().min(1).max(10).default(3),
});

export const ApprovalsConfig = z.strictObject({
  /** Calls of every caller matching any of these rules wait for an approver (tokens and JWT rules add their own `approve`). */
  require: z.array(ApprovalRule).default([]),
  /** How long a call waits for a decision before it ends tool_denied, seconds. Its own timeout starts when approved. */
  timeout_s: z
    .number()
    .positive()
    .max(7 * 24 * 3600)
    .default(900),
  /** Who may list and decide approvals; without auth, anyone who reaches the gateway may. */
  approvers: ApproversConfig.prefault({}),
  /** Let an approver approve a call it started itself. */
  allow_self: z.boolean().default(false),
  /** Tell someone a call is waiting (optional). */
  notify: NotifyConfig.optional(),
});
export type ApprovalsConfig = z.output<typeof ApprovalsConfig>;
