import { randomBytes } from "node:crypto";
import { createSecretBox, keyIdOf, SecretKeyUnavailable } from "../../src/domain/webhooks/secret-box.ts";

const [k1, k2, k3] = [randomBytes(32), randomBytes(32), randomBytes(32)];
const WEBHOOK = "0190a8c6-0000-7000-8000-000000000001";
const OTHER_WEBHOOK = "0190a8c6-0000-7000-8000-000000000002";
const SECRET = "whsec-ünïcode-🔑-with:colons";

describe("secret box", () => {
  it("seals with AES-256-GCM under the first key, a fresh IV each time, and opens it again", () => {
    const box = createSecretBox([k1, k2]);
    const sealed = box.seal(SECRET, WEBHOOK);
    expect(sealed).toMatch(new RegExp(`^v1:${keyIdOf(k1)}:[\\w-]{16}:[\\w-]+:[\\w-]{22}$`));
    expect(sealed).not.toContain(SECRET);
    expect(box.seal(SECRET, WEBHOOK)).not.toBe(sealed);
    expect(box.open(sealed, WEBHOOK)).toBe(SECRET);
    expect(box.keyIdOf(sealed)).toBe(keyIdOf(k1));
  });

  it("opens with any configured key, so a new key can be put first", () => {
    const sealedUnderOld = createSecretBox([k1]).seal(SECRET, WEBHOOK);
    expect(createSecretBox([k2, k1]).open(sealedUnderOld, WEBHOOK)).toBe(SECRET);
    expect(() => createSecretBox([k2, k3]).open(sealedUnderOld, WEBHOOK)).toThrow(SecretKeyUnavailable);
  });

  it("binds a sealed secret to its subscription and detects tampering", () => {
    const box = createSecretBox([k1]);
    const sealed = box.seal(SECRET, WEBHOOK);
    expect(() => box.open(sealed, OTHER_WEBHOOK)).toThrow(SecretKeyUnavailable);
    const [v, id, iv, ciphertext, tag] = sealed.split(":");
    const flipped = Buffer.from(ciphertext!, "base64url");
    flipped[0]! ^= 1;
    expect(() => box.open([v, id, iv, flipped.toString("base64url"), tag].join(":"), WEBHOOK)).toThrow(
      SecretKeyUnavailable,
    );
    expect(() => box.open("v1:garbage", WEBHOOK)).toThrow(SecretKeyUnavailable);
  });

  it("opens what the migration left in clear, naming it plain", () => {
    const box = createSecretBox([k1]);
    expect(box.open(`plain:${SECRET}`, WEBHOOK)).toBe(SECRET);
    expect(box.keyIdOf(`plain:${SECRET}`)).toBe("plain");
  });

  it("needs at least one key of 32 bytes", () => {
    expect(() => createSecretBox([])).toThrow("WEBHOOK_SECRET_KEYS");
    expect(() => createSecretBox([randomBytes(16)])).toThrow("32 bytes");
  });
});
