/** The interception engine. */
export { type Broker, createBroker } from './broker.js';
export { type CertificateAuthority, createCertificateAuthority, loadCertificateAuthority } from './ca.js';
export { STRIPPED_HEADERS } from './headers.js';
export { defaultDecide } from './decide.js';
export { isDnsName, Session, type SessionStats } from './session.js';
export * from './types.js';
