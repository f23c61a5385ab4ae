package security

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"hash"
)

// Encrypted PKCS#8 private keys (RFC 5958 EncryptedPrivateKeyInfo) with
// PBES2 (RFC 8018): PBKDF2 with an HMAC-SHA PRF and AES-CBC or
// DES-EDE3-CBC, which is what `openssl pkcs8 -topk8` (and
// `openssl genpkey -aes-256-cbc`) write. The standard library has no
// decoder for them; the structures are RFC 8018's, read with
// encoding/asn1.

var (
	oidPBES2         = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2        = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidHMACWithSHA1  = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}
	oidHMACWithSHA24 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 8}
	oidHMACWithSHA56 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidHMACWithSHA38 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 10}
	oidHMACWithSHA51 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 11}
	oidAES128CBC     = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 2}
	oidAES192CBC     = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 22}
	oidAES256CBC     = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
	oidDESEDE3CBC    = asn1.ObjectIdentifier{1, 2, 840, 113549, 3, 7}
)

type encryptedPrivateKeyInfo struct {
	Algo          pkix.AlgorithmIdentifier
	EncryptedData []byte
}

type pbes2Params struct {
	KeyDerivationFunc pkix.AlgorithmIdentifier
	EncryptionScheme  pkix.AlgorithmIdentifier
}

type pbkdf2Params struct {
	Salt           []byte
	IterationCount int
	KeyLength      int                      `asn1:"optional"`
	PRF            pkix.AlgorithmIdentifier `asn1:"optional"`
}

// maxPBKDF2Iterations bounds the work a key file can ask for.
const maxPBKDF2Iterations = 10_000_000

// decryptPKCS8 returns the PKCS#8 PrivateKeyInfo inside an
// EncryptedPrivateKeyInfo.
func decryptPKCS8(der []byte, password string) ([]byte, error) {
	var info encryptedPrivateKeyInfo
	if rest, err := asn1.Unmarshal(der, &info); err != nil || len(rest) != 0 {
		return nil, errors.New("the encrypted private key does not parse as PKCS#8 EncryptedPrivateKeyInfo")
	}
	if !info.Algo.Algorithm.Equal(oidPBES2) {
		return nil, fmt.Errorf("private key encryption %v is not supported (use PBES2, e.g. openssl pkcs8 -topk8 -v2 aes-256-cbc)", info.Algo.Algorithm)
	}
	var params pbes2Params
	if _, err := asn1.Unmarshal(info.Algo.Parameters.FullBytes, &params); err != nil {
		return nil, fmt.Errorf("PBES2 parameters: %w", err)
	}
	if !params.KeyDerivationFunc.Algorithm.Equal(oidPBKDF2) {
		return nil, fmt.Errorf("key derivation %v is not supported (PBKDF2 only)", params.KeyDerivationFunc.Algorithm)
	}
	var kdf pbkdf2Params
	if _, err := asn1.Unmarshal(params.KeyDerivationFunc.Parameters.FullBytes, &kdf); err != nil {
		return nil, fmt.Errorf("PBKDF2 parameters: %w", err)
	}
	if kdf.IterationCount < 1 || kdf.IterationCount > maxPBKDF2Iterations {
		return nil, fmt.Errorf("PBKDF2 iteration count %d out of range", kdf.IterationCount)
	}
	var prf func() hash.Hash
	switch a := kdf.PRF.Algorithm; {
	case len(a) == 0, a.Equal(oidHMACWithSHA1):
		prf = sha1.New
	case a.Equal(oidHMACWithSHA24):
		prf = sha256.New224
	case a.Equal(oidHMACWithSHA56):
		prf = sha256.New
	case a.Equal(oidHMACWithSHA38):
		prf = sha512.New384
	case a.Equal(oidHMACWithSHA51):
		prf = sha512.New
	default:
		return nil, fmt.Errorf("PBKDF2 PRF %v is not supported", a)
	}
	var keyLen int
	var newBlock func([]byte) (cipher.Block, error)
	switch a := params.EncryptionScheme.Algorithm; {
	case a.Equal(oidAES128CBC):
		keyLen, newBlock = 16, aes.NewCipher
	case a.Equal(oidAES192CBC):
		keyLen, newBlock = 24, aes.NewCipher
	case a.Equal(oidAES256CBC):
		keyLen, newBlock = 32, aes.NewCipher
	case a.Equal(oidDESEDE3CBC):
		keyLen, newBlock = 24, des.NewTripleDESCipher
	default:
		return nil, fmt.Errorf("private key cipher %v is not supported (AES-CBC or DES-EDE3-CBC)", a)
	}
	var iv []byte
	if _, err := asn1.Unmarshal(params.EncryptionScheme.Parameters.FullBytes, &iv); err != nil {
		return nil, fmt.Errorf("cipher parameters: %w", err)
	}
	key, err := pbkdf2.Key(prf, password, kdf.Salt, kdf.IterationCount, keyLen)
	if err != nil {
		return nil, err
	}
	block, err := newBlock(key)
	if err != nil {
		return nil, err
	}
	bs := block.BlockSize()
	if len(iv) != bs || len(info.EncryptedData) == 0 || len(info.EncryptedData)%bs != 0 {
		return nil, errors.New("the encrypted private key has a bad length or IV")
	}
	plain := make([]byte, len(info.EncryptedData))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(plain, info.EncryptedData)
	// PKCS#7 padding; a wrong password almost always breaks it.
	pad := int(plain[len(plain)-1])
	if pad == 0 || pad > bs {
		return nil, errWrongKeyPassword
	}
	for _, p := range plain[len(plain)-pad:] {
		if int(p) != pad {
			return nil, errWrongKeyPassword
		}
	}
	plain = plain[:len(plain)-pad]
	var probe asn1.RawValue
	if rest, err := asn1.Unmarshal(plain, &probe); err != nil || len(rest) != 0 {
		return nil, errWrongKeyPassword
	}
	return plain, nil
}

var errWrongKeyPassword = errors.New("the private key cannot be decrypted (wrong ssl.key.password?)")
