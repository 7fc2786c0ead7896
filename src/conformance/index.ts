export { CHECKS } from './checks.js';
export { type KnownConformance, knownConformance, type MockVendorName, mockVendor } from './known.js';
export { type ConformanceWithheld, conformanceWithheld, type GatedTool } from './gate.js';
export { conformImages, type ImageConformance, type ImageToTry } from './images.js';
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
