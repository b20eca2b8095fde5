// A throwaway self-signed certificate for local HTTPS receivers, made with the openssl CLI.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";

export interface SelfSignedCert {
  key: string;
  cert: string;
  /** The certificate as a file, for NODE_EXTRA_CA_CERTS. */
  certPath: string;
  remove(): void;
}

export function createSelfSignedCert(names = ["localhost", "hook.example.test"]): SelfSignedCert {
  const dir = mkdtempSync(path.join(os.tmpdir(), "appsec-cert-"));
  const keyPath = path.join(dir, "key.pem");
  const certPath = path.join(dir, "cert.pem");
  const san = [...names.map((n) => `DNS:${n}`), "IP:127.0.0.1"].join(",");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      keyPath,
      "-out",
      certPath,
      "-days",
      "1",
      "-subj",
      "/CN=localhost",
      "-addext",
      `subjectAltName=${san}`,
    ],
    { stdio: "ignore" },
  );
  return {
    key: readFileSync(keyPath, "utf8"),
    cert: readFileSync(certPath, "utf8"),
    certPath,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
