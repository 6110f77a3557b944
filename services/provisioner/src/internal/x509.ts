// Loaded on first use by pki.ts, never at start: see there.
import { webcrypto } from "node:crypto";
// @peculiar/x509 resolves its providers through tsyringe, which needs the Reflect metadata API.
import "reflect-metadata";
import * as x509 from "@peculiar/x509";

// Cast: the library types its provider with the DOM `Crypto`, which Node's webcrypto implements.
x509.cryptoProvider.set(webcrypto as unknown as ReturnType<typeof x509.cryptoProvider.get>);

export { x509 };
