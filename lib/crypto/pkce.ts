// PKCE (RFC 7636): the S256 transform and the syntax rules for verifiers and challenges.
import { constantTimeEqual, sha256 } from './secrets';

/** RFC 7636 §4.1: code_verifier = 43*128unreserved; unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~". */
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
/** An S256 challenge is BASE64URL(SHA256(verifier)): always 43 base64url characters; RFC 7636 §4.2 allows 43-128. */
const CHALLENGE = /^[A-Za-z0-9\-_]{43,128}$/;

/** Whether `verifier` has the syntax RFC 7636 §4.1 requires. */
export function isValidCodeVerifier(verifier: unknown): verifier is string {
  return typeof verifier === 'string' && VERIFIER.test(verifier);
}

/** Whether `challenge` has the syntax of an S256 code_challenge. */
export function isValidCodeChallenge(challenge: unknown): challenge is string {
  return typeof challenge === 'string' && CHALLENGE.test(challenge);
}

/** The S256 challenge of a verifier (RFC 7636 §4.2). */
export function s256Challenge(verifier: string): string {
  return sha256(verifier);
}

/** Whether `verifier` matches an S256 `challenge`, compared in constant time (RFC 7636 §4.6). */
export function verifyS256(verifier: string, challenge: string): boolean {
  return isValidCodeVerifier(verifier) && constantTimeEqual(s256Challenge(verifier), challenge);
}
