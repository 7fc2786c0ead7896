/**
 * The listing commands' `--limit` bound is the store's: a flag that accepted more than the store
 * takes would let a valid-looking call fail deep in the store with a different code, and one that
 * accepted less would hide rows an operator can page to.
 */
import t from 'tap';
import { limitParam } from '../../src/commands/common.js';
import { approvalsList } from '../../src/commands/approvals.js';
import { auditQuery } from '../../src/commands/audit.js';
import { MAX_LIMIT } from '../../src/store/rows.js';

t.equal(limitParam.max, MAX_LIMIT, "--limit's upper bound is the store's MAX_LIMIT");
t.equal(approvalsList.parameters.limit, limitParam, 'approvals list takes the shared --limit');
t.equal(auditQuery.parameters.limit, limitParam, 'audit query takes the shared --limit');
