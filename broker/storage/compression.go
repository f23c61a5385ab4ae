package storage

import (
	"fmt"

	"github.com/klassik/klassik/broker/storage/record"
	"github.com/twmb/franz-go/pkg/kerr"
)

// recompress rewrites client batches whose codec differs from the topic's
// compression.type ("producer" keeps the batches as
// sent). It returns data itself when nothing changes, else a new buffer;
// each rebuilt batch gets a new CRC and is checked against
// max.message.bytes again.
func recompress(data []byte, cfg *LogConfig) ([]byte, error) {
	if cfg.CompressionType == "" || cfg.CompressionType == "producer" {
		return data, nil
	}
	want, ok := record.ParseCodec(cfg.CompressionType)
	if !ok {
		return nil, fmt.Errorf("storage: unknown compression.type %q", cfg.CompressionType)
	}
	same := true
	_ = record.ForEachBatch(data, func(_ []byte, h record.BatchHeader) error {
		if h.Compression() != want {
			same = false
		}
		return nil
	})
	if same {
		return data, nil
	}
	out := make([]byte, 0, len(data))
	err := record.ForEachBatch(data, func(batch []byte, h record.BatchHeader) error {
		if h.Compression() == want {
			out = append(out, batch...)
			return nil
		}
		recs, err := record.Records(batch)
		if err != nil {
			return fmt.Errorf("%w: %v", kerr.CorruptMessage, err)
		}
		opts := record.OptionsFrom(h)
		opts.Codec = want
		nb, err := record.BuildChecked(opts, recs)
		if err != nil {
			return err
		}
		if len(nb) > int(cfg.MaxMessageBytes) {
			return fmt.Errorf("%w: batch of %d bytes after recompression exceeds max.message.bytes %d", kerr.MessageTooLarge, len(nb), cfg.MaxMessageBytes)
		}
		out = append(out, nb...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
