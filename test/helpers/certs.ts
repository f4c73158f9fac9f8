// Test certificates made with the openssl CLI: a CA per name and leaf certificates signed by it,
// each with the subjectAltName given. EC P-256 keys keep generation quick.

import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: 'pipe' });
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** Writes `<ca>-ca.crt/.key` and, per leaf, `<leaf>.crt/.key` into dir. */
export function makeCa(dir: string, ca: string, leaves: Record<string, string>): void {
  openssl(
    [
      'req',
      '-x509',
      ...EC,
      '-keyout',
      `${ca}-ca.key`,
      '-out',
      `${ca}-ca.crt`,
      '-days',
      '2',
      '-subj',
      `/CN=${ca} test CA`,
    ],
    dir,
  );
  for (const [leaf, san] of Object.entries(leaves)) {
    openssl(['req', ...EC, '-keyout', `${leaf}.key`, '-out', `${leaf}.csr`, '-subj', `/CN=${leaf}`], dir);
    writeFileSync(join(dir, `${leaf}.ext`), `subjectAltName=${san}\n`);
    openssl(
      [
        'x509',
        '-req',
        '-in',
        `${leaf}.csr`,
        '-CA',
        `${ca}-ca.crt`,
        '-CAkey',
        `${ca}-ca.key`,
        '-CAcreateserial',
        '-out',
        `${leaf}.crt`,
        '-days',
        '2',
        '-extfile',
        `${leaf}.ext`,
      ],
      dir,
    );
  }
}
