// Unit tests of the export's file encoders (web/present.js
// inferlabEncode): the CRC-32 of PNG and ZIP, the animated PNG assembled
// from PNG frames, and the uncompressed ZIP, each read back here with
// Node's zlib.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const zlib = require("node:zlib");
const { crc32, chunksOf, apng, zip } = require("../web/present.js");

const ascii = (s) => Buffer.from(s, "latin1");
const be32 = (v) => { const b = Buffer.alloc(4); b.writeUInt32BE(v >>> 0); return b; };
const chunk = (type, data) => Buffer.concat([be32(data.length), ascii(type), data, be32(zlib.crc32(Buffer.concat([ascii(type), data])))]);
const signature = Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]);

// png makes a w×h RGB PNG whose every pixel is rgb, with Node's zlib.
const png = (w, h, rgb) => {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type: RGB
  const rows = [];
  for (let y = 0; y < h; y++) {
    const row = Buffer.alloc(1 + 3 * w); // filter byte 0, then pixels
    for (let x = 0; x < w; x++) row.set(rgb, 1 + 3 * x);
    rows.push(row);
  }
  return new Uint8Array(Buffer.concat([signature, chunk("IHDR", ihdr), chunk("IDAT", zlib.deflateSync(Buffer.concat(rows))), chunk("IEND", Buffer.alloc(0))]));
};

const bytes = async (blob) => new Uint8Array(await blob.arrayBuffer());

test("crc32 is the CRC-32 of PNG and ZIP (zlib's)", () => {
  for (const s of ["", "a", "IEND", "123456789", "The quick brown fox jumps over the lazy dog"]) {
    assert.equal(crc32([ascii(s)]), zlib.crc32(ascii(s)), JSON.stringify(s));
  }
  assert.equal(crc32([ascii("123456789")]), 0xcbf43926, "the check value of CRC-32/ISO-HDLC");
  assert.equal(crc32([ascii("1234"), ascii("56789")]), 0xcbf43926, "over parts as over their concatenation");
});

test("apng: one IHDR, acTL with the frame count, an fcTL per frame, the first frame's IDAT, fdAT for the others", async () => {
  const frames = [png(3, 2, [255, 0, 0]), png(3, 2, [0, 255, 0]), png(3, 2, [0, 0, 255])];
  const out = await bytes(apng(frames, 2000));
  assert.deepEqual([...out.subarray(0, 8)], [...signature]);
  const chunks = chunksOf(out);
  // every chunk's CRC is right
  let at = 8;
  for (const c of chunks) {
    const crc = new DataView(out.buffer).getUint32(at + 8 + c.data.length);
    assert.equal(crc, zlib.crc32(Buffer.concat([ascii(c.type), c.data])), c.type + " CRC");
    at += 12 + c.data.length;
  }
  assert.equal(at, out.length, "nothing after the last chunk");
  assert.deepEqual(chunks.map((c) => c.type), ["IHDR", "acTL", "fcTL", "IDAT", "fcTL", "fdAT", "fcTL", "fdAT", "IEND"]);
  const dv = (d) => new DataView(d.buffer, d.byteOffset, d.byteLength);
  const actl = dv(chunks[1].data);
  assert.equal(actl.getUint32(0), 3, "frames");
  assert.equal(actl.getUint32(4), 0, "loops forever");
  // sequence numbers run 0, 1, 2… over fcTL and fdAT
  const seqs = chunks.filter((c) => c.type === "fcTL" || c.type === "fdAT").map((c) => dv(c.data).getUint32(0));
  assert.deepEqual(seqs, [0, 1, 2, 3, 4]);
  for (const fc of chunks.filter((c) => c.type === "fcTL")) {
    const d = dv(fc.data);
    assert.equal(fc.data.length, 26);
    assert.deepEqual([d.getUint32(4), d.getUint32(8), d.getUint32(12), d.getUint32(16)], [3, 2, 0, 0], "size and offset");
    assert.equal(d.getUint16(20) / d.getUint16(22), 2, "shown 2 s");
    assert.deepEqual([fc.data[24], fc.data[25]], [0, 0], "dispose none, blend source");
  }
  // each frame's pixels come back: the IDAT, then each fdAT past its sequence number
  const pixels = (data) => [...zlib.inflateSync(Buffer.from(data)).subarray(1, 4)];
  assert.deepEqual(pixels(chunks[3].data), [255, 0, 0]);
  assert.deepEqual(pixels(chunks[5].data.subarray(4)), [0, 255, 0]);
  assert.deepEqual(pixels(chunks[7].data.subarray(4)), [0, 0, 255]);
});

test("apng refuses frames of different sizes", () => {
  assert.throws(() => apng([png(3, 2, [0, 0, 0]), png(2, 3, [0, 0, 0])], 1000), /differ in size/);
});

test("zip: stored files with their names and CRCs, a central directory that finds them, the same bytes each time", async () => {
  const files = [
    { name: "garage-step-01.png", bytes: png(2, 2, [1, 2, 3]) },
    { name: "garage-step-02.png", bytes: png(2, 2, [4, 5, 6]) },
    { name: "naïve.txt", bytes: new Uint8Array(ascii("hello")) },
  ];
  const out = Buffer.from(await bytes(zip(files)));
  assert.deepEqual(Buffer.from(await bytes(zip(files))), out, "deterministic");
  // the end of central directory record: the last 22 bytes
  const end = out.length - 22;
  assert.equal(out.readUInt32LE(end), 0x06054b50);
  assert.equal(out.readUInt16LE(end + 10), files.length, "entries");
  const cdSize = out.readUInt32LE(end + 12);
  let cd = out.readUInt32LE(end + 16);
  assert.equal(cd + cdSize, end, "the directory ends where the end record starts");
  for (const f of files) {
    assert.equal(out.readUInt32LE(cd), 0x02014b50, "a central directory header");
    const method = out.readUInt16LE(cd + 10);
    const crc = out.readUInt32LE(cd + 16);
    const size = out.readUInt32LE(cd + 20);
    const nameLen = out.readUInt16LE(cd + 28);
    const local = out.readUInt32LE(cd + 42);
    const name = out.subarray(cd + 46, cd + 46 + nameLen).toString("utf8");
    assert.equal(name, f.name);
    assert.equal(method, 0, "stored");
    assert.equal(out.readUInt16LE(cd + 8) & 0x0800, 0x0800, "names flagged UTF-8");
    assert.equal(size, f.bytes.length);
    assert.equal(crc, zlib.crc32(f.bytes), f.name + " CRC");
    // the local header it points to, and the file's bytes after it
    assert.equal(out.readUInt32LE(local), 0x04034b50);
    const localName = out.readUInt16LE(local + 26);
    const extra = out.readUInt16LE(local + 28);
    const data = out.subarray(local + 30 + localName + extra, local + 30 + localName + extra + size);
    assert.deepEqual([...data], [...f.bytes], f.name + " bytes");
    cd += 46 + nameLen;
  }
});
