// Maps whatever a fetch failed with (undici errors, socket errors, TLS errors, our own guard
// errors) to one FetchErrorClass word plus a human-readable detail for the page log.
import type { FetchErrorClass } from "../shared/types.js";
import { DnsLookupError, isPermanentDnsFailure } from "./dns-cache.js";
import { SsrfBlockedError, type ConnectPhase } from "./guarded-connector.js";

export interface ClassifiedError {
  errorClass: FetchErrorClass;
  detail: string;
}

// OpenSSL certificate verification codes as Node reports them (err.code).
const TLS_VERIFY_CODES = new Set([
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_CRL",
  "UNABLE_TO_DECRYPT_CERT_SIGNATURE",
  "UNABLE_TO_DECRYPT_CRL_SIGNATURE",
  "UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY",
  "CERT_SIGNATURE_FAILURE",
  "CRL_SIGNATURE_FAILURE",
  "CERT_NOT_YET_VALID",
  "CERT_HAS_EXPIRED",
  "CRL_NOT_YET_VALID",
  "CRL_HAS_EXPIRED",
  "ERROR_IN_CERT_NOT_BEFORE_FIELD",
  "ERROR_IN_CERT_NOT_AFTER_FIELD",
  "ERROR_IN_CRL_LAST_UPDATE_FIELD",
  "ERROR_IN_CRL_NEXT_UPDATE_FIELD",
  "OUT_OF_MEM",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "CERT_CHAIN_TOO_LONG",
  "CERT_REVOKED",
  "INVALID_CA",
  "PATH_LENGTH_EXCEEDED",
  "INVALID_PURPOSE",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "HOSTNAME_MISMATCH",
]);

const CONNECT_CODES = new Set(["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "EADDRNOTAVAIL", "EHOSTDOWN", "ENETDOWN", "EACCES", "EPERM"]);
const RESET_CODES = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED", "UND_ERR_SOCKET", "UND_ERR_CLOSED"]);

function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "";
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Classifies a failure. `phase` is where the connection attempt was when it failed (from the
 * guarded connector), or undefined once the request was on an open connection.
 */
export function classifyFetchError(err: unknown, phase?: ConnectPhase): ClassifiedError {
  const code = codeOf(err);
  const message = messageOf(err);
  const withCode = code ? `${code}: ${message}` : message;

  if (err instanceof SsrfBlockedError) return { errorClass: "ssrf-blocked", detail: message };
  if (err instanceof DnsLookupError) return { errorClass: isPermanentDnsFailure(err.code) ? "dns" : "dns-transient", detail: `${err.code}: ${message}` };

  switch (code) {
    case "UND_ERR_CONNECT_TIMEOUT":
    case "ETIMEDOUT":
      return { errorClass: "connect-timeout", detail: phase === "tls" ? `during TLS handshake: ${withCode}` : withCode };
    case "UND_ERR_HEADERS_TIMEOUT":
      return { errorClass: "headers-timeout", detail: withCode };
    case "UND_ERR_BODY_TIMEOUT":
      return { errorClass: "body-timeout", detail: withCode };
    case "UND_ERR_HEADERS_OVERFLOW":
    case "HPE_HEADER_OVERFLOW":
      return { errorClass: "too-large-headers", detail: withCode };
    case "UND_ERR_RES_CONTENT_LENGTH_MISMATCH":
      // The connection ended (RST or FIN) before the body Content-Length promised: undici reports
      // a reset on a "Connection: close" response this way. A reset mid-body, not a malformed answer.
      return { errorClass: "reset", detail: `connection ended before the promised body: ${withCode}` };
  }
  if (code.startsWith("HPE_") || (err instanceof Error && err.name === "HTTPParserError")) {
    return { errorClass: "http-protocol", detail: withCode };
  }
  if (TLS_VERIFY_CODES.has(code) || code.startsWith("ERR_TLS_") || code.startsWith("ERR_SSL_") || code === "EPROTO") {
    return { errorClass: "tls", detail: withCode };
  }
  if (phase === "tls") return { errorClass: "tls", detail: `during TLS handshake: ${withCode}` };
  if (CONNECT_CODES.has(code) || phase === "connect") {
    return { errorClass: RESET_CODES.has(code) ? "reset" : "connect", detail: withCode };
  }
  if (RESET_CODES.has(code)) return { errorClass: "reset", detail: withCode };
  return { errorClass: "other", detail: withCode || "unknown error" };
}
