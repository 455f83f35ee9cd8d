/**
 * Certificates for `tapedeck serve --tls`: a CA made at start and a leaf it signs for
 * `localhost` and `127.0.0.1` (OpenAI's Node clients force `wss:` on the realtime URL, so a
 * plain-HTTP proxy cannot serve them). Made with `selfsigned`, never written by hand; the key of
 * the CA stays in memory, so the CA a client trusts signs nothing else.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { TapedeckError } from '../errors.ts';

export interface TlsMaterial {
  cert: string;
  key: string;
  /** The CA to trust (PEM), when tapedeck made the certificate. */
  ca?: string;
}

/**
 * A fresh CA and a leaf for localhost and 127.0.0.1 (EC P-256, valid for 7 days).
 *
 * @example
 * const { cert, key, ca } = await makeLocalCertificate()
 * https.createServer({ cert, key }, handler)
 */
export async function makeLocalCertificate(): Promise<Required<TlsMaterial>> {
  // Loaded here, not with the proxy: its X.509 stack is megabytes of heap that only --tls uses.
  const { generate } = await import('selfsigned');
  const notBeforeDate = new Date(Date.now() - 60_000);
  const notAfterDate = new Date(Date.now() + 7 * 24 * 3600_000);
  const ca = await generate([{ name: 'commonName', value: 'tapedeck local CA' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  const leaf = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate,
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }, { type: 7, ip: '::1' }] },
    ],
  });
  return { cert: leaf.cert, key: leaf.private, ca: ca.cert };
}

/**
 * The certificate to serve: the user's own (`--tls-cert`, `--tls-key`), else a new one, whose
 * CA is written to `caFile` when given.
 *
 * @example
 * const tls = await tlsMaterial({ caFile: 'tapedeck-ca.pem' })
 */
export async function tlsMaterial(opts: { certFile?: string; keyFile?: string; caFile?: string }): Promise<TlsMaterial> {
  if ((opts.certFile === undefined) !== (opts.keyFile === undefined)) {
    throw new TapedeckError('E_ARG', '--tls-cert and --tls-key go together.', { hint: 'Give both (your own certificate and its key), or neither (tapedeck makes one for localhost).' });
  }
  if (opts.certFile !== undefined) {
    const read = async (f: string, what: string) => {
      try {
        return await readFile(f, 'utf8');
      } catch (e) {
        throw new TapedeckError('E_ARG', `Cannot read the TLS ${what} ${f}: ${(e as Error).message}`, { file: f, hint: `Check the path given to --tls-${what}.` });
      }
    };
    return { cert: await read(opts.certFile, 'cert'), key: await read(opts.keyFile!, 'key') };
  }
  const made = await makeLocalCertificate();
  if (opts.caFile !== undefined) {
    try {
      await writeFile(opts.caFile, made.ca);
    } catch (e) {
      throw new TapedeckError('E_ARG', `Cannot write the CA to ${opts.caFile}: ${(e as Error).message}`, { file: opts.caFile, hint: 'Give --tls-ca a path in a directory you can write.' });
    }
  }
  return made;
}
