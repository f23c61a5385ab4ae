package config

// Kafka's PasswordEncoder (kafka.utils.PasswordEncoder): the password
// configs of /config/brokers/<id> are stored encrypted with a key derived
// from password.encoder.secret (PBKDF2, a fresh 256-byte salt per value)
// and the cipher of password.encoder.cipher.algorithm. The stored string is
// a comma-separated key:value map that carries everything needed to decode
// it (algorithms, key length, iterations, salt, IV, ciphertext, the
// password's length), so a value written by Kafka decodes here and the
// reverse.

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/klassik/klassik/broker/common/jvm"
)

var (
	passwordKeyFactories = []string{"PBKDF2WithHmacSHA512", "PBKDF2WithHmacSHA256", "PBKDF2WithHmacSHA1"}
	passwordCiphers      = []string{"AES/CBC/PKCS5Padding", "AES/GCM/NoPadding"}
)

// oneOfOrEmpty is oneOf that also accepts "" (an unset nullable key).
func oneOfOrEmpty(valid ...string) func(any) string {
	in := oneOf(valid...)
	return func(v any) string {
		if s, ok := v.(string); ok && s == "" {
			return ""
		}
		return in(v)
	}
}

func aesKeyLength(v any) string {
	if n, ok := v.(int64); ok && (n == 128 || n == 192 || n == 256) {
		return ""
	}
	return "is not an AES key length (128, 192 or 256)"
}

// ErrNoPasswordEncoderSecret is Kafka's refusal of a dynamic password config
// on a broker without password.encoder.secret.
var ErrNoPasswordEncoderSecret = errors.New("Password encoder secret not configured")

// PasswordEncoder encodes and decodes dynamic password configs.
type PasswordEncoder struct {
	secret     string
	keyFactory string // "" = PBKDF2WithHmacSHA512
	cipherAlg  string
	keyLength  int
	iterations int
	random     func([]byte) // fills salts and IVs; crypto/rand unless a test fixes it
}

// NewPasswordEncoder returns the encoder of c's password.encoder.secret,
// or of its old secret when old is true; nil when that secret is unset.
func (c *Config) NewPasswordEncoder(old bool) *PasswordEncoder {
	secret := c.PasswordEncoderSecret
	if old {
		secret = c.PasswordEncoderOldSecret
	}
	if secret == "" {
		return nil
	}
	return &PasswordEncoder{secret: secret, keyFactory: c.PasswordEncoderKeyFactoryAlgorithm, cipherAlg: c.PasswordEncoderCipherAlgorithm,
		keyLength: int(c.PasswordEncoderKeyLength), iterations: int(c.PasswordEncoderIterations),
		random: func(b []byte) { _, _ = rand.Read(b) }}
}

// Keys of the encoded form (Kafka's PasswordEncoder object).
const (
	peKeyFactory = "keyFactoryAlgorithm"
	peCipher     = "cipherAlgorithm"
	peIV         = "initializationVector"
	peKeyLength  = "keyLength"
	peSalt       = "salt"
	peIterations = "iterations"
	peEncrypted  = "encryptedPassword"
	pePassLength = "passwordLength"
	peGCMTagLen  = "authenticationTagLength"
)

// scalaMapOrder returns keys in the iteration order of a Scala 2.13
// immutable HashMap holding them, the order in which Kafka's encode writes
// the fields: a CHAMP trie over the keys' improved hash codes, five bits
// per level from the lowest, each node listing its single entries by
// bit position before its sub-nodes.
func scalaMapOrder(keys []string) []string {
	hashes := make(map[string]uint32, len(keys))
	for _, k := range keys {
		hashes[k] = scalaImprove(uint32(jvm.StringHashCode(k)))
	}
	var walk func(keys []string, shift uint) []string
	walk = func(keys []string, shift uint) []string {
		if len(keys) <= 1 || shift >= 32 {
			return keys
		}
		var groups [32][]string
		for _, k := range keys {
			m := (hashes[k] >> shift) & 31
			groups[m] = append(groups[m], k)
		}
		var out, nodes []string
		for _, g := range groups {
			if len(g) == 1 {
				out = append(out, g[0])
			}
		}
		for _, g := range groups {
			if len(g) > 1 {
				nodes = append(nodes, walk(g, shift+5)...)
			}
		}
		return append(out, nodes...)
	}
	return walk(keys, 0)
}

// scalaImprove is scala.collection.Hashing.improve.
func scalaImprove(hcode uint32) uint32 {
	h := hcode + ^(hcode << 9)
	h ^= h >> 14
	h += h << 4
	return h ^ (h >> 10)
}

func (e *PasswordEncoder) keyFactoryName() string {
	if e.keyFactory == "" {
		return "PBKDF2WithHmacSHA512"
	}
	return e.keyFactory
}

func prfFor(keyFactory string) (func() hash.Hash, error) {
	switch keyFactory {
	case "PBKDF2WithHmacSHA512":
		return sha512.New, nil
	case "PBKDF2WithHmacSHA256":
		return sha256.New, nil
	case "PBKDF2WithHmacSHA1":
		return sha1.New, nil
	}
	return nil, fmt.Errorf("unsupported key factory algorithm %s", keyFactory)
}

func (e *PasswordEncoder) deriveKey(keyFactory string, salt []byte, iterations, keyLength int) ([]byte, error) {
	prf, err := prfFor(keyFactory)
	if err != nil {
		return nil, err
	}
	if keyLength != 128 && keyLength != 192 && keyLength != 256 {
		return nil, fmt.Errorf("invalid AES key length %d", keyLength)
	}
	if iterations < 1 || iterations > 10_000_000 {
		return nil, fmt.Errorf("invalid iteration count %d", iterations)
	}
	// Java's PBEKeySpec takes the secret as UTF-16 chars; the PBKDF2 key
	// factories convert them to UTF-8 bytes.
	return pbkdf2.Key(prf, e.secret, salt, iterations, keyLength/8)
}

// Encode encrypts password and returns Kafka's stored form.
func (e *PasswordEncoder) Encode(password string) (string, error) {
	salt := make([]byte, 256)
	e.random(salt)
	key, err := e.deriveKey(e.keyFactoryName(), salt, e.iterations, e.keyLength)
	if err != nil {
		return "", err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return "", err
	}
	fields := map[string]string{
		peKeyFactory: e.keyFactoryName(), peCipher: e.cipherAlg, peKeyLength: strconv.Itoa(e.keyLength),
		peSalt: base64.StdEncoding.EncodeToString(salt), peIterations: strconv.Itoa(e.iterations),
		pePassLength: strconv.Itoa(javaLength(password)),
	}
	var ct []byte
	switch e.cipherAlg {
	case "AES/CBC/PKCS5Padding":
		iv := make([]byte, aes.BlockSize)
		e.random(iv)
		pt := pkcs5Pad([]byte(password), aes.BlockSize)
		ct = make([]byte, len(pt))
		cipher.NewCBCEncrypter(block, iv).CryptBlocks(ct, pt)
		fields[peIV] = base64.StdEncoding.EncodeToString(iv)
	case "AES/GCM/NoPadding":
		iv := make([]byte, 12)
		e.random(iv)
		g, err := cipher.NewGCM(block)
		if err != nil {
			return "", err
		}
		ct = g.Seal(nil, iv, []byte(password), nil)
		fields[peIV] = base64.StdEncoding.EncodeToString(iv)
		fields[peGCMTagLen] = "128"
	default:
		return "", fmt.Errorf("unsupported cipher algorithm %s", e.cipherAlg)
	}
	fields[peEncrypted] = base64.StdEncoding.EncodeToString(ct)
	var parts []string
	for _, k := range scalaMapOrder(slices.Collect(maps.Keys(fields))) {
		parts = append(parts, k+":"+fields[k])
	}
	return strings.Join(parts, ","), nil
}

// Decode decrypts a stored password with the parameters it carries; the
// error texts are Kafka's.
func (e *PasswordEncoder) Decode(encoded string) (string, error) {
	p := parseCSVMap(encoded)
	need := func(k string) (string, error) {
		v, ok := p[k]
		if !ok {
			return "", fmt.Errorf("Password could not be decoded: no %s", k)
		}
		return v, nil
	}
	var vals [7]string
	for i, k := range []string{peKeyFactory, peCipher, peKeyLength, peSalt, peIterations, peEncrypted, pePassLength} {
		v, err := need(k)
		if err != nil {
			return "", err
		}
		vals[i] = v
	}
	keyLength, err1 := strconv.Atoi(vals[2])
	iterations, err2 := strconv.Atoi(vals[4])
	passLen, err3 := strconv.Atoi(vals[6])
	salt, err4 := base64.StdEncoding.DecodeString(vals[3])
	ct, err5 := base64.StdEncoding.DecodeString(vals[5])
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		return "", fmt.Errorf("Password could not be decoded: %v", err)
	}
	ivText, err := need(peIV)
	if err != nil {
		return "", err
	}
	iv, err := base64.StdEncoding.DecodeString(ivText)
	if err != nil {
		return "", fmt.Errorf("Password could not be decoded: %v", err)
	}
	key, err := e.deriveKey(vals[0], salt, iterations, keyLength)
	if err != nil {
		return "", fmt.Errorf("Password could not be decoded: %v", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return "", fmt.Errorf("Password could not be decoded: %v", err)
	}
	var pt []byte
	switch vals[1] {
	case "AES/CBC/PKCS5Padding":
		if len(iv) != aes.BlockSize || len(ct) == 0 || len(ct)%aes.BlockSize != 0 {
			return "", errors.New("Password could not be decoded")
		}
		buf := make([]byte, len(ct))
		cipher.NewCBCDecrypter(block, iv).CryptBlocks(buf, ct)
		var ok bool
		if pt, ok = pkcs5Unpad(buf, aes.BlockSize); !ok {
			return "", errors.New("Password could not be decoded")
		}
	case "AES/GCM/NoPadding":
		if tl := p[peGCMTagLen]; tl != "128" || len(iv) == 0 {
			return "", errors.New("Password could not be decoded")
		}
		g, err := cipher.NewGCMWithNonceSize(block, len(iv))
		if err != nil {
			return "", fmt.Errorf("Password could not be decoded: %v", err)
		}
		if pt, err = g.Open(nil, iv, ct, nil); err != nil {
			return "", errors.New("Password could not be decoded")
		}
	default:
		return "", fmt.Errorf("Password could not be decoded: unsupported cipher algorithm %s", vals[1])
	}
	s := string(pt)
	if !utf8.ValidString(s) || javaLength(s) != passLen {
		return "", errors.New("Password could not be decoded, sanity check of length failed")
	}
	return s, nil
}

// javaLength is String.length: UTF-16 code units.
func javaLength(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

func pkcs5Pad(b []byte, size int) []byte {
	n := size - len(b)%size
	return append(bytes.Clone(b), bytes.Repeat([]byte{byte(n)}, n)...)
}

func pkcs5Unpad(b []byte, size int) ([]byte, bool) {
	if len(b) == 0 {
		return nil, false
	}
	n := int(b[len(b)-1])
	if n == 0 || n > size || n > len(b) {
		return nil, false
	}
	for _, c := range b[len(b)-n:] {
		if int(c) != n {
			return nil, false
		}
	}
	return b[:len(b)-n], true
}

// parseCSVMap is Kafka's CoreUtils.parseCsvMap: "k1:v1,k2:v2", each entry
// split at its first colon (base64 values have none).
func parseCSVMap(s string) map[string]string {
	m := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return m
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, ":")
		if !ok {
			continue
		}
		m[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return m
}
