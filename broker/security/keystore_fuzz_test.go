package security

import (
	"testing"
)

// FuzzDecryptPKCS8: any bytes and password give a key or an error, never a
// panic, and a large iteration count is refused before any work.
func FuzzDecryptPKCS8(f *testing.F) {
	f.Add([]byte{0x30, 0x03, 0x02, 0x01, 0x00}, "pw")
	f.Add([]byte("0\x81\x9a0N\x06\t*\x86H\x86\xf7\r\x01\x05\r0A0)\x06\t*\x86H\x86\xf7\r\x01\x05\x0c0\x1c\x04\x08saltsalt\x02\x02\x08\x000\x0c\x06\x08*\x86H\x86\xf7\r\x02\t\x05\x000\x14\x06\x08*\x86H\x86\xf7\r\x03\x07\x04\x08ivivivivABCDEFGH"), "klassik")
	f.Fuzz(func(t *testing.T, der []byte, password string) {
		_, _ = decryptPKCS8(der, password)
	})
}

// FuzzPEMKeyPair: PEM text from ssl.keystore.key / certificate.chain never
// panics the loader.
func FuzzPEMKeyPair(f *testing.F) {
	f.Add("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n", "")
	f.Add("", "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMAA=\n-----END ENCRYPTED PRIVATE KEY-----\n", "pw")
	f.Fuzz(func(t *testing.T, chain, key, password string) {
		_, _ = pemKeyPair("fuzz", []byte(chain), []byte(key), password)
		_, _ = jksKeyPair([]byte(key), password, "")
		_, _ = jksCertificates([]byte(chain), "")
	})
}

// FuzzPrincipalRules: any rules string parses or is refused, and a parsed
// mapper maps any DN or reports no match, without panicking.
func FuzzPrincipalRules(f *testing.F) {
	f.Add("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT", "CN=Duke,OU=ServiceUsers,O=Org,C=US")
	f.Add(`RULE:^CN=((\\, *|\w)+)(,.*|$)/$1$9$10\$2/U`, `CN=Tkac\, Adam,OU=ITZ`)
	f.Fuzz(func(t *testing.T, rules, dn string) {
		m, err := NewSslPrincipalMapper(rules)
		if err != nil {
			return
		}
		_, _ = m.Name(dn)
		_ = m.String()
	})
}
