/// Test credentials of the mock APNs: a test CA, the server certificate it signed (`localhost`,
/// `127.0.0.1`) and a client certificate for certificate-based auth tests, with its `.p12`.
///
/// They secure nothing but loopback tests: the keys are published here on purpose. Never trust
/// this CA outside a test (the service trusts it only when its `apns-ca-file` names it).
public enum MockAPNsCredentials {
    /// The test CA that signed the server and client certificates (PEM): what a client under test trusts.
    public static let caCertificatePEM = """
-----BEGIN CERTIFICATE-----
MIIBtTCCAVugAwIBAgIUCpfbpWwNLVUlspQb98ro40Q7AlAwCgYIKoZIzj0EAwIw
JzElMCMGA1UEAwwcUHVzaEJyaWRnZSBNb2NrIEFQTnMgVGVzdCBDQTAgFw0yNjEx
MjMwNjM4MTFaGA8yMTI2MTAzMDA2MzgxMVowJzElMCMGA1UEAwwcUHVzaEJyaWRn
ZSBNb2NrIEFQTnMgVGVzdCBDQTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABFHi
+FMl4F9hou+oZT2OMb0BqhYIYJSlwERWIN4/6MRT2jwopmKJp1IdOFwuVb0Z4jrA
DRHQ3dOsM4679TQtq5WjYzBhMB0GA1UdDgQWBBS86Pwfj6nq3lMjQU8oYRHWs6m/
dzAfBgNVHSMEGDAWgBS86Pwfj6nq3lMjQU8oYRHWs6m/dzAPBgNVHRMBAf8EBTAD
AQH/MA4GA1UdDwEB/wQEAwIBBjAKBggqhkjOPQQDAgNIADBFAiEAyiaJ/F6uTyff
uWV2jskEdoDnjmpai1O4M9/AgXkISnoCIANPEIYHq5VHvgt1w+Hag26TXF7bqt2y
N2vwZ/O8PUsi
-----END CERTIFICATE-----
"""

    /// The mock server's certificate (PEM), for `localhost` and `127.0.0.1`.
    public static let serverCertificatePEM = """
-----BEGIN CERTIFICATE-----
MIIByzCCAXKgAwIBAgIUMdzyl0Xg9N/QnRdQ2ZWwQKsDDU0wCgYIKoZIzj0EAwIw
JzElMCMGA1UEAwwcUHVzaEJyaWRnZSBNb2NrIEFQTnMgVGVzdCBDQTAgFw0yNjEx
MjMwNjM4MTFaGA8yMTI2MTAzMDA2MzgxMVowFDESMBAGA1UEAwwJbG9jYWxob3N0
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEaB+cZ9yEsSh1hFyL2AeHh/1as8T3
D6dBQLPiDoBllCo7jpU+jghaaqDG/zyW6nTC6KhO2SDgrOC3h3wr6rME36OBjDCB
iTAaBgNVHREEEzARgglsb2NhbGhvc3SHBH8AAAEwCQYDVR0TBAIwADATBgNVHSUE
DDAKBggrBgEFBQcDATALBgNVHQ8EBAMCB4AwHQYDVR0OBBYEFBiY5HugV9LFWOjm
9JXbyAOljZYfMB8GA1UdIwQYMBaAFLzo/B+PqereUyNBTyhhEdazqb93MAoGCCqG
SM49BAMCA0cAMEQCIHON4Dn00kadYZOZ/dGZCU+S2mla+c1dQDaHcWl/pDlaAiBM
kWMUmMGtL9PU3zF4YnAxY1ALkLoQC+f+0KratOExGQ==
-----END CERTIFICATE-----
"""

    /// The mock server's private key (PKCS #8 PEM).
    public static let serverPrivateKeyPEM = """
-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgxnTdzum4z55YlbSw
49dUnDRBQkF7He4KJkQwtAqhUo2hRANCAARoH5xn3ISxKHWEXIvYB4eH/VqzxPcP
p0FAs+IOgGWUKjuOlT6OCFpqoMb/PJbqdMLoqE7ZIOCs4LeHfCvqswTf
-----END PRIVATE KEY-----
"""

    /// A client certificate for certificate-based auth, signed by the test CA, for the topic
    /// `com.example.chat` (PEM).
    public static let clientCertificatePEM = """
-----BEGIN CERTIFICATE-----
MIIB7DCCAZKgAwIBAgIUMdzyl0Xg9N/QnRdQ2ZWwQKsDDU4wCgYIKoZIzj0EAwIw
JzElMCMGA1UEAwwcUHVzaEJyaWRnZSBNb2NrIEFQTnMgVGVzdCBDQTAgFw0yNjEx
MjMwNjM4MTFaGA8yMTI2MTAzMDA2MzgxMVowUjEuMCwGA1UEAwwlQXBwbGUgUHVz
aCBTZXJ2aWNlczogY29tLmV4YW1wbGUuY2hhdDEgMB4GCgmSJomT8ixkAQEMEGNv
bS5leGFtcGxlLmNoYXQwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAQBOaS5UDB6
qrUbDtKyYLTVhox7lAYlZrTwp+CORXNkMsKaaoMh/fkRTolr8QJWJg35GdH2mf5Z
KX1sHGi3wR7Ro28wbTAJBgNVHRMEAjAAMBMGA1UdJQQMMAoGCCsGAQUFBwMCMAsG
A1UdDwQEAwIHgDAdBgNVHQ4EFgQUzC8649cz9U05HpxgHHJqzGyYWbYwHwYDVR0j
BBgwFoAUvOj8H4+p6t5TI0FPKGER1rOpv3cwCgYIKoZIzj0EAwIDSAAwRQIgY/Ma
3i55GQnjD4EejaOwQUt5fyLW/WWK0qyD9JhRMikCIQC2b1xLb6A/jvCBV7X2Bu6P
xIUQ/IWiPWG8XkcoOxZ8qg==
-----END CERTIFICATE-----
"""

    /// The client certificate's private key (PKCS #8 PEM).
    public static let clientPrivateKeyPEM = """
-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgJYEZ0q+3Rp/LrNnt
g0DI7FVMkuaWsFvlOjcsNfAHlzGhRANCAAQBOaS5UDB6qrUbDtKyYLTVhox7lAYl
ZrTwp+CORXNkMsKaaoMh/fkRTolr8QJWJg35GdH2mf5ZKX1sHGi3wR7R
-----END PRIVATE KEY-----
"""

    /// The client certificate and key as a `.p12` (base64), protected by ``clientP12Password``.
    public static let clientP12Base64 = "MIIEfAIBAzCCBDIGCSqGSIb3DQEHAaCCBCMEggQfMIIEGzCCAtIGCSqGSIb3DQEHBqCCAsMwggK/AgEAMIICuAYJKoZIhvcNAQcBMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAhXrvEHpTFYTwICCAAwDAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEEEz65fk5ChqdYwMmLPcQA+eAggJQvC4MWzND5Y9Cz8+yVgMYGneD27TKHbXobnMe2RRl7najmC2xdNBwdM6h75vmz9dIYcJcT5y3L+qJGrzGZSIXoqRrCLs8Kh/cWtCDbykTaFKAJYlkzSaRAQFJpfcjoPF8EYELSt96igqOvq0yHEBGH6ABt+yKqGyJWWKStX2ELfZVpb1PURYuQYMD/LaDGatyy2R0TScp0hDyOhZ9SKPkJrTL2OmMnjecS2vTG3dQLKZFFF9y38HZJ1oxkGkgTNW3Zqo4lCSnxitpi2IyOavM7dqH0VH0sEiiXmClWT2WUjAyk9c0P6rsSGe+anCxMJNCvCGU1+1UbR5JdbiR+ls3mBoirOh+51NCYEWSzlA1CBpsY4T2wbVkWfIJQv7iuQk3klkL3JBwZPWks1INQ+PjI+Y1WXs4wj++4SxwefwjmoeUx2Go/qQvgVqjJgXy7Lb6+6vVT4SS9wu6gQTSIsyg6M6B/IbeWWCTqPO0lWaOGO3aBxLUyz1J8CWxZajm72F33D1VHYartKDvzHr7/SXMGx1z1CIDES9H4JBPMDARxEHdKUIgqNi9oy6wOkc5SI+uNyao9C/qAPH4Smg5ahx4NSmvit08FmT3N+k8v8z/qly+MDK7gnxaDmyrpy3ByhLaCAUgss+efZfmgwhZyJYm0a0Mjhh8p3TOISuiTyg1oVnuFaU4KdAqeBqXUQ6E/BmbPfpLVB4XVNAlKosqu3vIQt7uIlVs63s7SAnFAcgaTs+eZQGaTCj9JtaCSzmWWWS9msCfh4NtmACY5TbWrmRbJDCCAUEGCSqGSIb3DQEHAaCCATIEggEuMIIBKjCCASYGCyqGSIb3DQEMCgECoIHvMIHsMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAjYkaSjygCekwICCAAwDAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEELfFiwrvUrh+kzP+6UxwzmQEgZByYyzKNo1vc/gUB3WCWmfrm4lgy1bVRuKpZaVTaPkT7P0nbPlFyqdwbbL7TORxnB4m49P5pAt3Ha1AymmIxLOzPIUgutC2g4RFW0HGQEeq2Ol1XddERhTEiuUSao562XRYjy2Qz0gzUfOAJdArdin4qJ/R3bF2CbZGxg8PQqLCxjbIQnXzsi/M8h3eIzbWFmoxJTAjBgkqhkiG9w0BCRUxFgQUxK5wMYMmLOQKSEKVtd2W05RKK80wQTAxMA0GCWCGSAFlAwQCAQUABCAsF2cOUpV8JTjsCoPXA1p7iH85dgsOUdXCTAIdKatl4gQIIqrSHvRoUiACAggA"

    /// The `.p12`'s password.
    public static let clientP12Password = "mock-password"
}
