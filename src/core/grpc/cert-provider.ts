// A certificate provider for grpc-js's certificate-provider server credentials that re-reads
// the certificate, key and CA files on an interval and publishes them only when they changed
// and form a usable TLS context. grpc-js's own file watcher publishes "no certificate" when a
// read fails, which drops every new connection during a rotation (for example between the
// moment the certificate and the key are replaced); this one keeps serving the last good pair.

import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import type * as grpc from '@grpc/grpc-js';

type IdentityListener = grpc.experimental.IdentityCertificateUpdateListener;
type CaListener = grpc.experimental.CaCertificateUpdateListener;

export interface CertificateFiles {
  certFile: string;
  keyFile: string;
  caFile?: string | undefined;
}

export class FileCertificateProvider implements grpc.experimental.CertificateProvider {
  private identity: grpc.experimental.IdentityCertificateUpdate | undefined;
  private ca: grpc.experimental.CaCertificateUpdate | undefined;
  private readonly identityListeners = new Set<IdentityListener>();
  private readonly caListeners = new Set<CaListener>();
  private timer: NodeJS.Timeout | undefined;

  /** Reads the files once, synchronously: a missing or unusable file throws here, at start. */
  constructor(
    private readonly files: CertificateFiles,
    private readonly intervalMs: number,
    private readonly onReloadError: (err: Error) => void,
  ) {
    const error = this.reload();
    if (error) throw error;
  }

  /** Re-reads the files; returns the error instead of throwing so a timer can keep going. */
  reload(): Error | undefined {
    let cert: Buffer, key: Buffer, ca: Buffer | undefined;
    try {
      cert = readFileSync(this.files.certFile);
      key = readFileSync(this.files.keyFile);
      ca = this.files.caFile ? readFileSync(this.files.caFile) : undefined;
      // Throws on a certificate that does not match its key, or unparsable PEM.
      createSecureContext({ cert, key, ...(ca ? { ca } : {}) });
    } catch (err) {
      return new Error(`gRPC TLS files not usable (keeping the previous ones): ${(err as Error).message}`);
    }
    if (!this.identity || !this.identity.certificate.equals(cert) || !this.identity.privateKey.equals(key)) {
      this.identity = { certificate: cert, privateKey: key };
      for (const l of this.identityListeners) l(this.identity);
    }
    if (ca && (!this.ca || !this.ca.caCertificate.equals(ca))) {
      this.ca = { caCertificate: ca };
      for (const l of this.caListeners) l(this.ca);
    }
    return undefined;
  }

  addIdentityCertificateListener(listener: IdentityListener): void {
    this.identityListeners.add(listener);
    this.startWatching();
    const current = this.identity;
    if (current) process.nextTick(() => this.identityListeners.has(listener) && listener(current));
  }

  removeIdentityCertificateListener(listener: IdentityListener): void {
    this.identityListeners.delete(listener);
    this.stopWatchingWhenUnused();
  }

  addCaCertificateListener(listener: CaListener): void {
    this.caListeners.add(listener);
    this.startWatching();
    const current = this.ca;
    if (current) process.nextTick(() => this.caListeners.has(listener) && listener(current));
  }

  removeCaCertificateListener(listener: CaListener): void {
    this.caListeners.delete(listener);
    this.stopWatchingWhenUnused();
  }

  /** Stops the timer and forgets every listener (after a failed start, or on close). */
  dispose(): void {
    this.identityListeners.clear();
    this.caListeners.clear();
    this.stopWatchingWhenUnused();
  }

  private startWatching(): void {
    if (this.timer || this.intervalMs <= 0) return;
    this.timer = setInterval(() => {
      const err = this.reload();
      if (err) this.onReloadError(err);
    }, this.intervalMs);
    this.timer.unref();
  }

  private stopWatchingWhenUnused(): void {
    if (this.identityListeners.size + this.caListeners.size > 0 || !this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
