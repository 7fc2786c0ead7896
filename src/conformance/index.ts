export { CHECKS } from './checks.js';
export { type KnownConformance, knownConformance, type MockVendorName, mockVendor } from './known.js';
export { runConformance } from './run.js';
export { conformanceTable } from './table.js';
export {
  CONFORMANCE_CODES,
  type ConformanceCheck,
  type ConformanceCode,
  type ConformanceOptions,
  type ConformanceProbe,
  type ConformanceReport,
} from './types.js';
