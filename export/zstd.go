package export

import (
	"io"
	"sync"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// pageZstd is the Zstd codec of the Parquet files written in this process:
// arrow-go's codec (decoding, streams, bounds, other levels), whose page
// encoders at zstdLevel use a window of zstdWindow bytes. Parquet
// compresses every page on its own — about the data page size (1 MiB),
// more only when one value is larger — so a longer window finds next to
// nothing more (the same size on session text), while the default 8 MiB
// window costs every pooled encoder 16 MiB of history: 32 MiB of the Go
// heap during an export to both sinks, which the garbage collector's
// target doubles.
type pageZstd struct {
	base compress.Codec
	pool sync.Pool // *zstd.Encoder at zstdLevel with the short window
}

// zstdWindow is the window of the page encoders.
const zstdWindow = 2 << 20

func init() {
	base, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		return
	}
	if _, ok := base.(compress.StreamingCodec); ok {
		compress.RegisterCodec(compress.Codecs.Zstd, &pageZstd{base: base})
	}
}

func (z *pageZstd) encoder() *zstd.Encoder {
	if enc, ok := z.pool.Get().(*zstd.Encoder); ok {
		return enc
	}
	enc, err := zstd.NewWriter(nil, zstd.WithZeroFrames(true), zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(zstdLevel)),
		zstd.WithEncoderConcurrency(1), zstd.WithAllLitEntropyCompression(true), zstd.WithWindowSize(zstdWindow))
	if err != nil {
		return nil
	}
	return enc
}

// EncodeLevel compresses one page.
func (z *pageZstd) EncodeLevel(dst, src []byte, level int) []byte {
	if level != zstdLevel {
		return z.base.EncodeLevel(dst, src, level)
	}
	enc := z.encoder()
	if enc == nil {
		return z.base.EncodeLevel(dst, src, level)
	}
	defer z.pool.Put(enc)
	return enc.EncodeAll(src, dst[:0])
}

func (z *pageZstd) Encode(dst, src []byte) []byte { return z.base.Encode(dst, src) }
func (z *pageZstd) CompressBound(n int64) int64   { return z.base.CompressBound(n) }
func (z *pageZstd) Decode(dst, src []byte) []byte { return z.base.Decode(dst, src) }
func (z *pageZstd) NewReader(r io.Reader) io.ReadCloser {
	return z.base.(compress.StreamingCodec).NewReader(r)
}
func (z *pageZstd) NewWriter(w io.Writer) io.WriteCloser {
	return z.base.(compress.StreamingCodec).NewWriter(w)
}
func (z *pageZstd) NewWriterLevel(w io.Writer, level int) (io.WriteCloser, error) {
	return z.base.(compress.StreamingCodec).NewWriterLevel(w, level)
}

// DecodeWithError decodes one page, reporting corrupt input as an error.
func (z *pageZstd) DecodeWithError(dst, src []byte) ([]byte, error) {
	return compress.Decode(z.base, dst, src)
}
