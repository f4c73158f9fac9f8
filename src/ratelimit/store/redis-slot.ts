// Redis Cluster hash slot of a key: CRC16/XMODEM of the key (or of its {hash tag}) mod 16384.
// Used to group a batch's commands per node, since a cluster pipeline must stay on one node.

const TABLE = (() => {
  const t = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    t[i] = crc;
  }
  return t;
})();

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const b of bytes) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >>> 8) ^ b) & 0xff]!;
  return crc;
}

const encoder = new TextEncoder();

export function keySlot(key: string): number {
  const open = key.indexOf('{');
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) return crc16(encoder.encode(key.slice(open + 1, close))) & 16383;
  }
  return crc16(encoder.encode(key)) & 16383;
}
