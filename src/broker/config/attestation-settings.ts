import type { ATTESTATION_MODES, ATTESTATION_PROVIDERS, AttestationBlock } from './config-schema.js';

export type AttestationMode = (typeof ATTESTATION_MODES)[number];
export type AttestationProvider = (typeof ATTESTATION_PROVIDERS)[number];

/** Where Firebase App Check's tokens come from and how they are checked. */
export const FIREBASE_APP_CHECK = {
  header: 'X-Firebase-AppCheck',
  jwksUrl: 'https://firebaseappcheck.googleapis.com/v1/jwks',
  issuer: (projectNumber: string) => `https://firebaseappcheck.googleapis.com/${projectNumber}`,
  audience: (projectNumber: string) => `projects/${projectNumber}`,
} as const;

/** How the broker checks that a request comes from a genuine build of the application it names. */
export interface AttestationSettings {
  readonly mode: Exclude<AttestationMode, 'off'>;
  readonly provider: AttestationProvider;
  /** The request header that carries the token, as configured (`X-Firebase-AppCheck`). */
  readonly header: string;
  readonly issuer: string;
  /** A value the token's `aud` must hold. */
  readonly audience: string;
  readonly jwksUrl: string;
  /** The claim that names the application: it must equal the application's `appId`. */
  readonly appClaim: string;
  /** A token's `jti` is accepted once. */
  readonly singleUse: boolean;
}

/** The resolved settings, or undefined when attestation is off (the schema has checked that the rest is there). */
export function attestationSettings(block: AttestationBlock | undefined): AttestationSettings | undefined {
  if (block === undefined || block.mode === 'off') return undefined;
  const common = { mode: block.mode, singleUse: block.singleUse };
  if (block.provider === 'firebase-app-check') {
    const projectNumber = String(block.projectNumber);
    return {
      ...common,
      provider: 'firebase-app-check',
      header: FIREBASE_APP_CHECK.header,
      issuer: FIREBASE_APP_CHECK.issuer(projectNumber),
      audience: FIREBASE_APP_CHECK.audience(projectNumber),
      jwksUrl: block.jwksUrl ?? FIREBASE_APP_CHECK.jwksUrl,
      appClaim: 'sub',
    };
  }
  return {
    ...common,
    provider: 'jwt',
    header: block.header as string,
    issuer: block.issuer as string,
    audience: block.audience as string,
    jwksUrl: block.jwksUrl as string,
    appClaim: block.appClaim ?? 'sub',
  };
}
