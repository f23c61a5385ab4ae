package config

import (
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"
)

// ParseYAML reads broker configuration from YAML using the same keys as
// server.properties. Keys may be written flat ("log.dirs: /data") or nested
// ("log: {dirs: /data}"); nesting is joined with dots. Scalars keep their
// literal text, so "broker.id: 01" and "broker.id=01" mean the same; a list
// becomes Kafka's comma-separated form; null means "not set" and the key is
// dropped. A key given twice (also via different nestings) is an error.
func ParseYAML(r io.Reader) (map[string]string, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(r)
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return map[string]string{}, nil
		}
		return nil, fmt.Errorf("yaml: %w", err)
	}
	out := map[string]string{}
	if len(doc.Content) == 0 {
		return out, nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return out, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("yaml: line %d: the document must be a mapping of config keys", root.Line)
	}
	if err := flattenYAML("", root, out); err != nil {
		return nil, err
	}
	return out, nil
}

func flattenYAML(prefix string, n *yaml.Node, out map[string]string) error {
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		if kn.Kind != yaml.ScalarNode {
			return fmt.Errorf("yaml: line %d: keys must be plain strings", kn.Line)
		}
		key := kn.Value
		if prefix != "" {
			key = prefix + "." + key
		}
		if vn.Kind == yaml.AliasNode {
			vn = vn.Alias
		}
		switch vn.Kind {
		case yaml.MappingNode:
			if err := flattenYAML(key, vn, out); err != nil {
				return err
			}
			continue
		case yaml.SequenceNode:
			items := make([]string, 0, len(vn.Content))
			for _, it := range vn.Content {
				if it.Kind != yaml.ScalarNode {
					return fmt.Errorf("yaml: line %d: %s: list items must be scalars", it.Line, key)
				}
				items = append(items, strings.TrimSpace(it.Value))
			}
			if err := putYAML(out, key, strings.Join(items, ","), kn.Line); err != nil {
				return err
			}
		case yaml.ScalarNode:
			if vn.Tag == "!!null" {
				if _, dup := out[key]; dup {
					return fmt.Errorf("yaml: line %d: %s is given twice", kn.Line, key)
				}
				continue
			}
			if err := putYAML(out, key, vn.Value, kn.Line); err != nil {
				return err
			}
		default:
			return fmt.Errorf("yaml: line %d: %s: unsupported value", kn.Line, key)
		}
	}
	return nil
}

func putYAML(out map[string]string, key, value string, line int) error {
	if _, dup := out[key]; dup {
		return fmt.Errorf("yaml: line %d: %s is given twice", line, key)
	}
	out[key] = value
	return nil
}
