// A byte-level ZIP writer for tests: local headers, data, optional data descriptors, central
// directory and end record (PKWARE APPNOTE.TXT 4.3). Every field can be overridden, so a test
// can build archives no well-behaved library would write: local and central names or sizes that
// disagree, symlink entries, duplicate names, names with NUL or backslashes.

import { crc32, deflateRawSync } from 'node:zlib';

export interface RawEntry {
  /** Name in the central directory. */
  name: string | Uint8Array;
  /** Name in the local header (defaults to `name`). */
  localName?: string | Uint8Array;
  data?: Uint8Array;
  /** The bytes written as the entry's (compressed) data instead of `data` compressed. */
  body?: Uint8Array;
  /** 0 stored, 8 deflate (default 8). */
  method?: 0 | 8;
  /** Unix mode goes in the high 16 bits; made-by host 3 (Unix) is set when this is given. */
  unixMode?: number;
  /** Overrides of what the headers declare (default: the true values). */
  central?: { size?: number; compressedSize?: number; crc?: number };
  local?: { size?: number; compressedSize?: number; crc?: number };
  /** Bit 3: sizes and CRC follow the data in a descriptor (local header fields left at zero). */
  descriptor?: boolean;
  /** Only a central record, pointing at this offset (e.g. into another entry's data). */
  centralOnlyAt?: number;
}

/** The local header and data of one entry, as `rawZip` writes them (to hide inside another entry). */
export function localRecord(entry: RawEntry): Uint8Array {
  const zip = Buffer.from(rawZip([entry]));
  return new Uint8Array(zip.subarray(0, zip.readUInt32LE(zip.length - 6)));
}

const enc = (s: string | Uint8Array) => (typeof s === 'string' ? Buffer.from(s, 'utf8') : Buffer.from(s));

export function rawZip(entries: readonly RawEntry[]): Uint8Array {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const data = Buffer.from(e.data ?? new Uint8Array(0));
    const method = e.method ?? 8;
    const body = e.body ? Buffer.from(e.body) : method === 8 ? deflateRawSync(data) : data;
    const crc = crc32(data) >>> 0;
    const name = enc(e.name);
    const localName = enc(e.localName ?? e.name);
    const flags = (e.descriptor ? 0x0008 : 0) | 0x0800;
    const l = { size: data.length, compressedSize: body.length, crc, ...e.local };
    const c = { size: data.length, compressedSize: body.length, crc, ...e.central };

    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(0, 10);
    local.writeUInt16LE(0x21, 12); // 1980-01-01
    local.writeUInt32LE(e.descriptor && !e.local ? 0 : l.crc, 14);
    local.writeUInt32LE(e.descriptor && !e.local ? 0 : l.compressedSize, 18);
    local.writeUInt32LE(e.descriptor && !e.local ? 0 : l.size, 22);
    local.writeUInt16LE(localName.length, 26);
    local.writeUInt16LE(0, 28);
    const localOffset = e.centralOnlyAt ?? offset;
    if (e.centralOnlyAt === undefined) {
      parts.push(local, localName, body);
      offset += local.length + localName.length + body.length;
    }
    if (e.descriptor && e.centralOnlyAt === undefined) {
      const d = Buffer.alloc(16);
      d.writeUInt32LE(0x08074b50, 0);
      d.writeUInt32LE(c.crc, 4);
      d.writeUInt32LE(c.compressedSize, 8);
      d.writeUInt32LE(c.size, 12);
      parts.push(d);
      offset += d.length;
    }

    const cd = Buffer.alloc(46);
    cd.writeUInt32LE(0x02014b50, 0);
    cd.writeUInt16LE(e.unixMode !== undefined ? 0x0314 : 0x0014, 4);
    cd.writeUInt16LE(20, 6);
    cd.writeUInt16LE(flags, 8);
    cd.writeUInt16LE(method, 10);
    cd.writeUInt16LE(0, 12);
    cd.writeUInt16LE(0x21, 14);
    cd.writeUInt32LE(c.crc, 16);
    cd.writeUInt32LE(c.compressedSize, 20);
    cd.writeUInt32LE(c.size, 24);
    cd.writeUInt16LE(name.length, 28);
    cd.writeUInt32LE(e.unixMode !== undefined ? (e.unixMode << 16) >>> 0 : 0, 38);
    cd.writeUInt32LE(localOffset, 42);
    central.push(cd, name);
  }
  const dir = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  const count = entries.length;
  end.writeUInt16LE(count, 8);
  end.writeUInt16LE(count, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return new Uint8Array(Buffer.concat([...parts, dir, end]));
}
