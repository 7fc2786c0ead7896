import { writeFileSync } from 'node:fs';
import { renderErrorsDoc } from './errors-doc.js';

writeFileSync(new URL('../docs/errors.md', import.meta.url), renderErrorsDoc());
