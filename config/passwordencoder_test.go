package config

import (
	"strings"
	"testing"
)

// fixedRandom fills a 256-byte salt with 0..255 and an IV with 100, 101, ...
func fixedRandom(b []byte) {
	for i := range b {
		if len(b) == 256 {
			b[i] = byte(i)
		} else {
			b[i] = byte(100 + i)
		}
	}
}

const goldenSalt = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0BBQkNERUZHSElKS0xNTk9QUVJTVFVWV1hZWltcXV5fYGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn+AgYKDhIWGh4iJiouMjY6PkJGSk5SVlpeYmZqbnJ2en6ChoqOkpaanqKmqq6ytrq+wsbKztLW2t7i5uru8vb6/wMHCw8TFxsfIycrLzM3Oz9DR0tPU1dbX2Nna29zd3t/g4eLj5OXm5+jp6uvs7e7v8PHy8/T19vf4+fr7/P3+/w=="

// TestPasswordEncoderGolden pins the stored form against values computed
// with the JDK's javax.crypto following Kafka's PasswordEncoder steps
// (PBEKeySpec over the secret, SecretKeyFactory PBKDF2WithHmacSHA512 /
// SHA256, Cipher AES/CBC/PKCS5Padding / AES/GCM/NoPadding with the same
// salt and IV; jshell, OpenJDK 17), and the field order of Kafka's encode
// (the Scala 2.13 HashMap's iteration order of its keys).
func TestPasswordEncoderGolden(t *testing.T) {
	const pw = "s3cr3t-pässword"
	cases := []struct {
		name string
		enc  PasswordEncoder
		want string
	}{
		{"cbc", PasswordEncoder{secret: "encoder-secret", cipherAlg: "AES/CBC/PKCS5Padding", keyLength: 128, iterations: 4096},
			"encryptedPassword:2ULMXCWezYDQPIMZk4f5faRu4S4PwnxHeZtV/avTKbY=,keyLength:128,cipherAlgorithm:AES/CBC/PKCS5Padding," +
				"initializationVector:ZGVmZ2hpamtsbW5vcHFycw==,keyFactoryAlgorithm:PBKDF2WithHmacSHA512,passwordLength:15," +
				"salt:" + goldenSalt + ",iterations:4096"},
		{"gcm", PasswordEncoder{secret: "encoder-secret", keyFactory: "PBKDF2WithHmacSHA256", cipherAlg: "AES/GCM/NoPadding", keyLength: 256, iterations: 2048},
			"encryptedPassword:6NCIjps2wWXM7yQ41lzXC2CPG6/kiIaK2GZuL0cw6jY=,keyLength:256,cipherAlgorithm:AES/GCM/NoPadding," +
				"initializationVector:ZGVmZ2hpamtsbW5v,keyFactoryAlgorithm:PBKDF2WithHmacSHA256,passwordLength:15," +
				"authenticationTagLength:128,salt:" + goldenSalt + ",iterations:2048"},
	}
	for _, tc := range cases {
		e := tc.enc
		e.random = fixedRandom
		got, err := e.Encode(pw)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
		back, err := e.Decode(tc.want)
		if err != nil || back != pw {
			t.Errorf("%s: decode = %q, %v", tc.name, back, err)
		}
	}
}

func TestPasswordEncoderRoundTripAndRefusals(t *testing.T) {
	c, err := FromMap(map[string]string{"zookeeper.connect": "127.0.0.1:2181", "password.encoder.secret": "s1", "password.encoder.old.secret": "s0"})
	if err != nil {
		t.Fatal(err)
	}
	enc := c.NewPasswordEncoder(false)
	for _, pw := range []string{"", "x", "sixteen-bytes-pw", "日本語のパスワード", strings.Repeat("p", 1000)} {
		s, err := enc.Encode(pw)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := enc.Decode(s); err != nil || got != pw {
			t.Fatalf("round trip of %q: %q %v", pw, got, err)
		}
		if _, err := c.NewPasswordEncoder(true).Decode(s); err == nil {
			t.Fatalf("the old secret decoded a value encoded with the new one")
		}
	}
	if _, err := enc.Decode("keyLength:128,salt:AAAA"); err == nil {
		t.Fatal("decoded an incomplete value")
	}
	// Without password.encoder.secret a password config is refused, as at
	// the cluster default.
	plain, _ := FromMap(map[string]string{"zookeeper.connect": "127.0.0.1:2181"})
	const key = "listener.name.external.ssl.key.password"
	if _, err := ToPersistentProps(map[string]string{key: "k"}, true, plain); err == nil || err.Error() != "Password encoder secret not configured" {
		t.Fatalf("without a secret: %v", err)
	}
	if _, err := ToPersistentProps(map[string]string{key: "k"}, false, c); err == nil || err.Error() != "Password config can be defined only at broker level" {
		t.Fatalf("at the default: %v", err)
	}
	stored, err := ToPersistentProps(map[string]string{key: "k", "message.max.bytes": "10"}, true, c)
	if err != nil || stored["message.max.bytes"] != "10" || !strings.Contains(stored[key], "encryptedPassword:") {
		t.Fatalf("stored %v %v", stored, err)
	}
	var logged []string
	back := FromPersistentProps(stored, true, c, func(msg string, _ ...any) { logged = append(logged, msg) })
	if back[key] != "k" || len(logged) != 0 {
		t.Fatalf("loaded %v, logged %v", back, logged)
	}
	if back := FromPersistentProps(stored, true, plain, func(msg string, _ ...any) { logged = append(logged, msg) }); back[key] != "" || len(logged) != 1 {
		t.Fatalf("a broker without the secret applied %v (logged %v)", back, logged)
	}
}

// FuzzPasswordDecode: Decode of any string returns an error or a value;
// it never panics, and a value it returns re-encodes and decodes to itself.
func FuzzPasswordDecode(f *testing.F) {
	e := &PasswordEncoder{secret: "encoder-secret", cipherAlg: "AES/CBC/PKCS5Padding", keyLength: 128, iterations: 1024, random: fixedRandom}
	s, _ := e.Encode("seed")
	f.Add(s)
	f.Add("keyFactoryAlgorithm:PBKDF2WithHmacSHA1,cipherAlgorithm:AES/GCM/NoPadding,keyLength:128,salt:AA==,iterations:1024,encryptedPassword:AA==,passwordLength:1,initializationVector:AA==,authenticationTagLength:128")
	f.Add("")
	f.Fuzz(func(t *testing.T, in string) {
		p := parseCSVMap(in)
		if n := p[peIterations]; len(n) > 5 { // keep PBKDF2 cheap under fuzzing
			return
		}
		v, err := e.Decode(in)
		if err != nil {
			return
		}
		again, err := e.Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := e.Decode(again); err != nil || back != v {
			t.Fatalf("re-encode of %q: %q %v", v, back, err)
		}
	})
}
