"""Who is speaking to the pool: mutual TLS on every pool connection, unix socket and TCP alike.

The pool's key folder holds a certificate authority of its own (`ca.key`, `ca.crt`) and the
server's certificate. Each table service gets a credential made for one board
(`tablectl pool credential --board ID`): a client certificate whose common name is
"table:<board>", signed by the pool's CA, and the CA's certificate to check the pool by. The pool
takes a request for a board only on a connection whose certificate names that board, so a table
can speak only for its own board, and a caller with no credential gets no further than the
handshake. The server's certificate alone carries the server-auth purpose and the name
"tablectl pool", so a table's credential cannot pose as the pool to the other tables.

Keys are EC P-256 (every OpenSSL speaks it); files are 0600 in 0700 folders (tablectl.keys).
"""
import datetime
import json
import os
import ssl

from ..errors import TablectlError

SERVER_NAME = "tablectl pool"
TABLE_PREFIX = "table:"
CA_FILE, CA_KEY = "ca.crt", "ca.key"
SERVER_CERT, SERVER_KEY = "server.crt", "server.key"
CLIENT_CERT, CLIENT_KEY = "pool-client.crt", "pool-client.key"
VALID_DAYS = 3650
ISSUED = "credentials.json"  # board -> the serial number of its one valid credential


def _issued(folder):
    data = _read(os.path.join(folder, ISSUED))
    try:
        issued = json.loads(data) if data else {}
    except ValueError:
        raise TablectlError("%s is not JSON: the pool cannot tell which credentials are valid"
                            % os.path.join(folder, ISSUED))
    return issued if isinstance(issued, dict) else {}


def current_credential(folder, tls_sock, board):
    """True when the connection's certificate is the board's newest credential."""
    serial = (tls_sock.getpeercert() or {}).get("serialNumber")
    current = _issued(folder).get(board)
    try:
        return serial is not None and current is not None and int(serial, 16) == int(current, 16)
    except ValueError:
        return False


def _x509():
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    except ImportError:
        raise TablectlError("the pool's credentials need the cryptography package (pip install 'tablectl[pool]')")
    return x509, hashes, serialization, ec, ExtendedKeyUsageOID, NameOID


def _write_private(path, data):
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def _name(NameOID, x509, cn):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _issue(ca_key, ca_cert, cn, server):
    x509, hashes, serialization, ec, EKU, NameOID = _x509()
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder().subject_name(_name(NameOID, x509, cn)).issuer_name(ca_cert.subject)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5))
               .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
               .add_extension(x509.ExtendedKeyUsage([EKU.SERVER_AUTH if server else EKU.CLIENT_AUTH]), critical=True))
    if server:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName("tablectl-pool")]), critical=False)
    cert = builder.sign(ca_key, hashes.SHA256())
    pem_key = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return cert.public_bytes(serialization.Encoding.PEM), pem_key


def _ca(folder, create):
    """(ca_key, ca_cert) of the pool's key folder, made on first use when create."""
    x509, hashes, serialization, ec, _EKU, NameOID = _x509()
    cert_pem, key_pem = _read(os.path.join(folder, CA_FILE)), _read(os.path.join(folder, CA_KEY))
    if cert_pem is None or key_pem is None:
        if not create:
            raise TablectlError("the pool's key folder %s has no certificate authority (ca.crt, ca.key): "
                                "start `tablectl pool serve` once to make it" % folder)
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        name = _name(NameOID, x509, "tablectl pool CA")
        cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
                .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
                .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                             data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                             crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
                .sign(key, hashes.SHA256()))
        key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
        cert_pem = cert.public_bytes(serialization.Encoding.PEM)
        _write_private(os.path.join(folder, CA_KEY), key_pem)
        _write_private(os.path.join(folder, CA_FILE), cert_pem)
    return (serialization.load_pem_private_key(key_pem, None), x509.load_pem_x509_certificate(cert_pem))


def server_files(folder):
    """(ca.crt, server.crt, server.key) paths, each made on first use."""
    ca_key, ca_cert = _ca(folder, create=True)
    cert_path, key_path = os.path.join(folder, SERVER_CERT), os.path.join(folder, SERVER_KEY)
    if _read(cert_path) is None or _read(key_path) is None:
        cert, key = _issue(ca_key, ca_cert, SERVER_NAME, server=True)
        _write_private(key_path, key)
        _write_private(cert_path, cert)
    return os.path.join(folder, CA_FILE), cert_path, key_path


def issue_table_credential(pool_keys, board, out_folder):
    """A client credential for one board's table service, written to out_folder (0700): its
    certificate and key and the pool's CA certificate. Returns the folder."""
    from ..keys import _BOARD_ID
    if not isinstance(board, str) or not _BOARD_ID.match(board):
        raise TablectlError("board id %r is not a board id" % (board,))
    ca_key, ca_cert = _ca(pool_keys, create=True)
    cert, key = _issue(ca_key, ca_cert, TABLE_PREFIX + board, server=False)
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    # The board's newest credential is its only one: issuing a new one retires the one before.
    issued = _issued(pool_keys)
    issued[board] = "%X" % x509.load_pem_x509_certificate(cert).serial_number
    _write_private(os.path.join(pool_keys, ISSUED), json.dumps(issued, sort_keys=True).encode())
    _write_private(os.path.join(out_folder, CLIENT_KEY), key)
    _write_private(os.path.join(out_folder, CLIENT_CERT), cert)
    _write_private(os.path.join(out_folder, CA_FILE), ca_cert.public_bytes(serialization.Encoding.PEM))
    return out_folder


def server_context(folder):
    ca, cert, key = server_files(folder)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.load_cert_chain(cert, key)
    ctx.load_verify_locations(ca)
    ctx.verify_mode = ssl.CERT_REQUIRED  # no certificate of the pool's CA, no connection
    return ctx


def client_context(folder):
    """The context a table service reaches the pool with, from its credential folder."""
    paths = [os.path.join(folder, n) for n in (CA_FILE, CLIENT_CERT, CLIENT_KEY)]
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        raise TablectlError("no pool credential in %s (missing %s): make one with `tablectl pool credential "
                            "--board ID --out %s` on the pool's machine" % (folder, ", ".join(
                                os.path.basename(p) for p in missing), folder))
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.load_verify_locations(paths[0])
    ctx.load_cert_chain(paths[1], paths[2])
    ctx.check_hostname = False  # a unix socket has no host name: the pool's name is checked below
    ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx


def common_name(tls_sock):
    cert = tls_sock.getpeercert()
    for rdn in (cert or {}).get("subject", ()):
        for k, v in rdn:
            if k == "commonName":
                return v
    return None


def check_server(tls_sock):
    if common_name(tls_sock) != SERVER_NAME:
        raise ConnectionError("the peer's certificate is not the pool's (%r)" % common_name(tls_sock))


def peer_board(tls_sock):
    """The board a table's certificate speaks for, or None."""
    cn = common_name(tls_sock)
    if cn and cn.startswith(TABLE_PREFIX):
        return cn[len(TABLE_PREFIX):]
    return None
