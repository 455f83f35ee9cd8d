/**
 * Certificates for `tapedeck serve --tls`: a CA made at start and a leaf it signs for
 * `localhost` and `127.0.0.1` (OpenAI's Node clients force `wss:` on the realtime URL, so a
 * plain-HTTP proxy cannot serve them). Made with `selfsigned`, never written by hand; the key of
 * the CA stays in memory, so the CA a client trusts signs nothing else.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';
import { TapedeckError } from '../errors.ts';

/**
 * A certificate and its key (PEM) for the proxy's HTTPS, with the CA to trust when tapedeck made
 * it.
 */
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
  const { generate } = await loadSelfsigned();
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
 * The certificate generator, loaded here, not with the proxy: its X.509 stack is megabytes of
 * heap that only TLS uses, and ~20 packages on disk, so it is an optional peer dependency that
 * an install of tapedeck does not pull. Missing, E_ARG with the ways to serve TLS all the same.
 */
async function loadSelfsigned(): Promise<typeof import('selfsigned')> {
  try {
    return await import('selfsigned');
  } catch (e) {
    // Missing itself, not a package of its own that a broken install lacks (named otherwise).
    const code = (e as { code?: unknown } | null)?.code;
    if ((code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') || !/['"]selfsigned['"]/.test((e as Error).message)) throw e;
    throw new TapedeckError('E_ARG', 'Cannot make a TLS certificate: tapedeck makes it with the selfsigned package, an optional peer dependency, which is not installed.', {
      option: 'tls',
      lasting: true,
      // No API call in it: the command line shows a hint naming one only by its command forms.
      hint: 'npm install selfsigned (a dev dependency, beside llm-tapedeck). Or serve TLS with a certificate of your own (tapedeck serve --tls-cert FILE --tls-key FILE; certFile and keyFile of tlsMaterial), or serve without TLS (tls: false in the serve options of a test tape).',
    });
  }
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
    if (opts.caFile !== undefined) {
      // The CA file is written only for a certificate tapedeck makes: given with the user's own,
      // it was ignored, and NODE_EXTRA_CA_CERTS then named a file that was never written.
      throw new TapedeckError('E_ARG', `--tls-ca ${opts.caFile} writes the CA of the certificate tapedeck makes, and --tls-cert / --tls-key give your own.`, {
        hint: 'Leave --tls-ca out and have clients trust the CA that signed your certificate (NODE_EXTRA_CA_CERTS=<that CA>), or leave --tls-cert and --tls-key out.',
      });
    }
    const material = { cert: await read(opts.certFile, 'cert'), key: await read(opts.keyFile!, 'key') };
    checkPair(material, opts.certFile, opts.keyFile!);
    return material;
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

/**
 * Throws E_ARG, naming the files, when a certificate and key would not serve: a file that is no
 * PEM (a tape, the two swapped) or a key that is not the certificate's. Node's own error for
 * these (an OpenSSL code) reached users as an internal error.
 *
 * @example
 * checkPair({ cert, key }, 'cert.pem', 'key.pem')
 */
export function checkPair(m: TlsMaterial, certFile: string, keyFile: string): void {
  try {
    createSecureContext({ cert: m.cert, key: m.key });
  } catch (e) {
    const msg = (e as Error).message;
    const what = /key values mismatch/i.test(msg)
      ? `the key ${keyFile} is not the key of the certificate ${certFile}`
      : /no start line|bad base64|PEM/i.test(msg)
        ? `${certFile} or ${keyFile} is not a PEM file (a certificate must start with -----BEGIN CERTIFICATE-----, a key with -----BEGIN … PRIVATE KEY-----; swapped files give this too)`
        : `the certificate ${certFile} and key ${keyFile} do not make a TLS server`;
    throw new TapedeckError('E_ARG', `Cannot serve TLS: ${what} (${msg}).`, { file: certFile, hint: 'Give --tls-cert the certificate and --tls-key its private key, both PEM, or leave both out (tapedeck makes a certificate for localhost).' });
  }
}
