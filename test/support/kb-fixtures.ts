import { deflateRawSync } from 'node:zlib';
import { crc32 } from 'node:zlib';

/**
 * Small generators for the knowledge-base file tests: PDFs and DOCX files built byte by byte, so
 * the hostile ones (encrypted, 10,000 pages, zip bombs with honest or lying size headers) need no
 * committed binaries.
 */

function pdfString(text: string): string {
  return `(${text.replace(/[\\()]/g, (c) => `\\${c}`)})`;
}

export type PdfOptions = {
  /** One array of lines per page. */
  pages?: string[][];
  /** Pages without text (a scanned PDF has images only). */
  blankPages?: number;
  /** A trailer /Encrypt dictionary the empty password does not open. */
  encrypted?: boolean;
};

/** A PDF 1.4 file with Helvetica text, one line per `Tj`, each line its own row. */
export function makePdf(options: PdfOptions): Buffer {
  const pages = options.pages ?? Array.from({ length: options.blankPages ?? 1 }, () => []);
  const objects: string[] = [];
  const add = (body: string) => objects.push(body) - 1 + 1; // object number
  const catalog = add('');
  const pageTree = add('');
  const font = add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>');
  const kids: number[] = [];
  for (const lines of pages) {
    const stream =
      lines.length === 0
        ? ''
        : `BT /F1 12 Tf 14 TL 50 780 Td ${lines.map((l) => `${pdfString(l)} Tj T*`).join(' ')} ET`;
    const content = add(`<< /Length ${Buffer.byteLength(stream, 'latin1')} >>\nstream\n${stream}\nendstream`);
    kids.push(
      add(
        `<< /Type /Page /Parent ${pageTree} 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 ${font} 0 R >> >> /Contents ${content} 0 R >>`,
      ),
    );
  }
  objects[catalog - 1] = `<< /Type /Catalog /Pages ${pageTree} 0 R >>`;
  objects[pageTree - 1] = `<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${kids.length} >>`;
  let encrypt = '';
  if (options.encrypted) {
    const pad = '<' + 'ab'.repeat(32) + '>';
    encrypt = ` /Encrypt ${add(`<< /Filter /Standard /V 1 /R 2 /Length 40 /P -4 /O ${pad} /U ${pad} >>`)} 0 R /ID [<0123456789abcdef0123456789abcdef> <0123456789abcdef0123456789abcdef>]`;
  }
  let out = '%PDF-1.4\n%\xe2\xe3\xcf\xd3\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) out += `${String(offset).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root ${catalog} 0 R${encrypt} >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

export type ZipEntry = { name: string; data: Buffer | string; store?: boolean };

/**
 * A ZIP archive (deflate). `lieAboutSize` writes 1 KB as every entry's uncompressed size in both
 * headers, whatever the entry really unpacks to.
 */
export function makeZip(entries: ZipEntry[], options: { lieAboutSize?: boolean } = {}): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  // Entries that share one Buffer are compressed once (a bomb's parts are the same zeros).
  const deflated = new Map<Buffer, Buffer>();
  for (const entry of entries) {
    const raw = typeof entry.data === 'string' ? Buffer.from(entry.data, 'utf8') : entry.data;
    let data = entry.store ? raw : deflated.get(raw);
    if (!data) deflated.set(raw, (data = deflateRawSync(raw, { level: 9 })));
    const name = Buffer.from(entry.name, 'utf8');
    const size = options.lieAboutSize ? 1024 : raw.length;
    const crc = crc32(raw);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0, 6);
    local.writeUInt16LE(entry.store ? 0 : 8, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    locals.push(local, name, data);
    const header = Buffer.alloc(46);
    header.writeUInt32LE(0x02014b50, 0);
    header.writeUInt16LE(20, 4);
    header.writeUInt16LE(20, 6);
    header.writeUInt16LE(entry.store ? 0 : 8, 10);
    header.writeUInt32LE(crc, 16);
    header.writeUInt32LE(data.length, 20);
    header.writeUInt32LE(size, 24);
    header.writeUInt16LE(name.length, 28);
    header.writeUInt32LE(offset, 42);
    central.push(header, name);
    offset += local.length + name.length + data.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const CONTENT_TYPES = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/numbering.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.numbering+xml"/></Types>`;
const RELS = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`;

const DOCUMENT_RELS = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/numbering" Target="numbering.xml"/></Relationships>`;
const NUMBERING = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:numbering xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/><w:lvlText w:val="-"/></w:lvl></w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num></w:numbering>`;

function escapeXml(text: string): string {
  return text.replace(/[<>&]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;' })[c]!);
}

export type DocxBlock = { heading?: string; paragraph?: string; bullet?: string };

function documentXml(blocks: DocxBlock[], padding = ''): string {
  const body = blocks
    .map((b) => {
      if (b.heading !== undefined)
        return `<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>${escapeXml(b.heading)}</w:t></w:r></w:p>`;
      if (b.bullet !== undefined)
        return `<w:p><w:pPr><w:pStyle w:val="ListParagraph"/><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr><w:r><w:t>${escapeXml(b.bullet)}</w:t></w:r></w:p>`;
      return `<w:p><w:r><w:t xml:space="preserve">${escapeXml(b.paragraph ?? '')}</w:t></w:r></w:p>`;
    })
    .join('');
  return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}${padding}</w:body></w:document>`;
}

/** A minimal DOCX: headings (Heading1), paragraphs and bullet points. */
export function makeDocx(blocks: DocxBlock[]): Buffer {
  return makeZip([
    { name: '[Content_Types].xml', data: CONTENT_TYPES },
    { name: '_rels/.rels', data: RELS },
    { name: 'word/document.xml', data: documentXml(blocks) },
    { name: 'word/_rels/document.xml.rels', data: DOCUMENT_RELS },
    { name: 'word/numbering.xml', data: NUMBERING },
  ]);
}

/** The most one bomb part unpacks to: larger bombs are several parts of the same zeros. */
const BOMB_PART_BYTES = 64 * 1024 * 1024;

/**
 * A DOCX whose extra parts unpack to `unpackedBytes` of zeros (about 1/1000 of that packed), with
 * honest size headers or lying ones (1 KB each). Beyond 64 MB the zeros are split into parts of equal
 * size that share one compressed copy, so a 1 GB bomb costs this process 64 MB and one deflate.
 */
export function makeZipBombDocx(unpackedBytes: number, options: { lieAboutSize?: boolean } = {}): Buffer {
  const parts = Math.ceil(unpackedBytes / BOMB_PART_BYTES);
  const zeros = Buffer.alloc(Math.ceil(unpackedBytes / parts));
  return makeZip(
    [
      { name: '[Content_Types].xml', data: CONTENT_TYPES },
      { name: '_rels/.rels', data: RELS },
      { name: 'word/document.xml', data: documentXml([{ paragraph: 'Hallo' }]) },
      ...Array.from({ length: parts }, (_, i) => ({
        name: parts === 1 ? 'word/media/bomb.bin' : `word/media/bomb-${i + 1}.bin`,
        data: zeros,
      })),
    ],
    options,
  );
}

/** The first bytes of a Windows executable (MZ header and PE signature), padded. */
export function makeExecutable(): Buffer {
  const exe = Buffer.alloc(1024);
  exe.write('MZ', 0, 'latin1');
  exe.writeUInt32LE(0x80, 0x3c);
  exe.write('PE\0\0', 0x80, 'latin1');
  exe.writeUInt16LE(0x14c, 0x84);
  return exe;
}
