// Owns reading the Authorization header: the one Bearer parser and the one Basic parser every
// surface uses (API security, control plane, the journal's account of a refused request).

/** The token of `Authorization: Bearer <token>`, if the header has that form. */
export function parseBearer(header: string | undefined): string | undefined {
  return header ? /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] : undefined;
}

/** client_id and secret from `Authorization: Basic BASE64(client_id:client_secret)`, if well formed. */
export function parseBasic(header: string | undefined): { clientId: string; secret: string } | undefined {
  const match = header ? /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header) : null;
  const decoded = match ? Buffer.from(match[1], 'base64').toString('utf8') : '';
  const colon = decoded.indexOf(':');
  return colon < 1 ? undefined : { clientId: decoded.slice(0, colon), secret: decoded.slice(colon + 1) };
}
