#!/usr/bin/env bash
# A SAML 2.0 login for tests: Apache httpd with mod_auth_mellon as the service provider, and a
# pysaml2 identity provider (scripts/peers/saml/idp.py) behind HTTP Basic auth that signs its
# responses. Loopback only, high ports, a temp dir, processes stopped by PID.
#
#   saml.sh start  [--dir DIR]
#   saml.sh stop   --dir DIR [--keep]
#   saml.sh status --dir DIR
#
# Exit status 3 means a dependency is missing (the message says which).
# start prints only KEY=value lines on stdout (eval-able):
#   SP_PORT=<Apache SP vhost, use https://127.0.0.1:SP_PORT>
#   OTHER_PORT=<a second Apache vhost, use https://localhost:OTHER_PORT (another origin and domain)>
#   IDP_PORT=<pysaml2 IdP, use https://localhost:IDP_PORT>
#   IDP_USER=alice  IDP_PASSWORD=<UTF-8 password with a '+' in it>  DIR=  APACHE_PID=  IDP_PID=
# TLS: both servers present TestCerts/server-chain.pem (CN=localhost, SAN localhost/127.0.0.1).
#
# SP vhost (https://127.0.0.1:SP_PORT):
#   /secret/          Mellon-protected: without a session 302 to the IdP (HTTP-Redirect binding,
#                     signed AuthnRequest); after login 200 text/plain "saml protected content"
#                     + remote_user= + the MELLON_* attributes
#   /mellon/...       Mellon endpoints (metadata, postResponse = the ACS, HTTP-POST binding)
# Both vhosts, for redirect/cookie/auth tests (all answers text/plain from one CGI):
#   /echo             method=, body_bytes=, body_sha256=, content_type=, authorization=,
#                     cookie=, x_secret=, x_custom=, origin=, host=
#   /r301 /r302 /r303 /r307 /r308    that status -> /echo
#   /to-other         302 -> https://localhost:OTHER_PORT/echo      (another origin)
#   /to-sp            302 -> https://127.0.0.1:SP_PORT/echo         (another origin)
#   /to-other-basic   302 -> https://localhost:OTHER_PORT/basic-stay (a challenge at another origin)
#   /to-http          302 -> http://127.0.0.1:SP_PORT/echo          (a TLS downgrade)
#   /loop             302 -> /loop
#   /set-cookies      sets host-only, Domain=127.0.0.1, Path=/echo, Max-Age, expired, Secure,
#                     HttpOnly, SameSite and refused (Domain=com, Domain=example.org) cookies
#   /basic-stay       Basic (realm "mtls saml", user mtls / password "pässword+1"), then the echo
#   /digest-short     Digest MD5 (realm "mtls short", user mtls / password mtls), nonce lifetime
#                     2 s, so a remembered nonce comes back stale=true
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
SAML_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

HTTPD=${APACHE_HTTPD_BIN:-/usr/sbin/apache2}
MODDIR=${APACHE_MODULE_DIR:-/usr/lib/apache2/modules}
PYTHON=/usr/bin/python3
IDP_USER=alice
IDP_PASSWORD='wönderland+1'

PEER_PROCESSES=("APACHE_PID:@DIR@/apache2.conf:10" "IDP_PID:@DIR@:10")

check_deps() {
  [[ -x "$HTTPD" ]] || missing "$HTTPD (apt-get install apache2)"
  [[ -f "$MODDIR/mod_auth_mellon.so" ]] || missing "mod_auth_mellon (apt-get install libapache2-mod-auth-mellon)"
  [[ -x /usr/bin/xmlsec1 ]] || missing "xmlsec1 (apt-get install xmlsec1)"
  [[ -x "$PYTHON" ]] || missing "$PYTHON (apt-get install python3)"
  "$PYTHON" -c 'import saml2' 2>/dev/null || missing "pysaml2 for $PYTHON (apt-get install python3-pysaml2)"
  command -v mellon_create_metadata >/dev/null || missing "mellon_create_metadata (apt-get install libapache2-mod-auth-mellon)"
}

write_files() { # DIR SP OTHER IDP
  local d=$1 sp=$2 other=$3 idp=$4
  mkdir -p "$d/run" "$d/sp" "$d/htdocs" "$d/cgi-bin"
  cp "$CERTS/server-chain.pem" "$d/tls.pem"
  cp "$CERTS/server.key" "$d/tls.key"
  chmod 600 "$d/tls.key"
  printf 'ok\n' >"$d/htdocs/index.html"
  printf 'text/html html\ntext/plain txt\n' >"$d/mime.types"
  printf '%s:%s\n' "$IDP_USER" "$IDP_PASSWORD" >"$d/idp-users"

  # IdP signing key (a SAML metadata key: self-signed, never checked against a CA)
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=mtls test IdP signing" \
    -keyout "$d/idp.key" -out "$d/idp.pem" 2>/dev/null
  # SP key, certificate and metadata, made by Debian's tool for Mellon
  (cd "$d/sp" && mellon_create_metadata "https://127.0.0.1:$sp/mellon/metadata" "https://127.0.0.1:$sp/mellon" >/dev/null 2>&1)
  local base; base=$(ls "$d/sp"/*.xml | head -1); base=${base%.xml}
  mv "$base.xml" "$d/sp-metadata.xml"; mv "$base.key" "$d/sp/sp.key"; mv "$base.cert" "$d/sp/sp.cert"
  "$PYTHON" "$SAML_DIR/idp.py" metadata --base "https://localhost:$idp" --dir "$d" 2>>"$d/idp.log"

  # Basic (htpasswd, apr1) and Digest (htdigest) users
  printf 'mtls:%s\n' "$(openssl passwd -apr1 'pässword+1')" >"$d/htpasswd"
  printf 'mtls:mtls short:%s\n' "$(printf 'mtls:mtls short:mtls' | openssl md5 -r | cut -d' ' -f1)" >"$d/htdigest"

  cat >"$d/cgi-bin/echo.cgi" <<'CGI'
#!/usr/bin/python3
import hashlib, os, sys
n = int(os.environ.get("CONTENT_LENGTH") or 0)
body = sys.stdin.buffer.read(n) if n > 0 else b""
e = os.environ.get
lines = [
    "path=" + e("REQUEST_URI", ""),
    "method=" + e("REQUEST_METHOD", ""),
    "body_bytes=%d" % len(body),
    "body_sha256=" + hashlib.sha256(body).hexdigest(),
    "body=" + body[:200].decode("latin-1"),
    "content_type=" + e("CONTENT_TYPE", ""),
    "authorization=" + e("HTTP_AUTHORIZATION", ""),
    "remote_user=" + e("REMOTE_USER", ""),
    "cookie=" + e("HTTP_COOKIE", ""),
    "x_secret=" + e("HTTP_X_SECRET", ""),
    "x_custom=" + e("HTTP_X_CUSTOM", ""),
    "origin=" + e("HTTP_ORIGIN", ""),
    "host=" + e("HTTP_HOST", ""),
]
sys.stdout.write("Content-Type: text/plain; charset=utf-8\r\n\r\n" + "\n".join(lines) + "\n")
CGI
  cat >"$d/cgi-bin/secret.cgi" <<'CGI'
#!/usr/bin/python3
import os, sys
lines = ["saml protected content", "remote_user=" + os.environ.get("REMOTE_USER", "")]
lines += ["%s=%s" % (k, v) for k, v in sorted(os.environ.items()) if k.startswith("MELLON_")]
sys.stdout.write("Content-Type: text/plain; charset=utf-8\r\n\r\n" + "\n".join(lines) + "\n")
CGI
  cat >"$d/cgi-bin/set-cookies.cgi" <<'CGI'
#!/bin/sh
printf 'Content-Type: text/plain; charset=utf-8\r\n'
printf 'Set-Cookie: hostonly=1; Path=/; Secure\r\n'
printf 'Set-Cookie: domainip=2; Domain=127.0.0.1; Path=/\r\n'
printf 'Set-Cookie: echoonly=3; Path=/echo\r\n'
printf 'Set-Cookie: persistent=4; Max-Age=3600; Path=/; HttpOnly\r\n'
printf 'Set-Cookie: expired=5; Expires=Thu, 01 Jan 1970 00:00:01 GMT; Path=/\r\n'
printf 'Set-Cookie: strict=6; Path=/; Secure; SameSite=Strict\r\n'
printf 'Set-Cookie: tld=7; Domain=com; Path=/\r\n'
printf 'Set-Cookie: foreign=8; Domain=example.org; Path=/\r\n'
printf '\r\n'
printf 'cookies set\n'
CGI
  chmod 755 "$d/cgi-bin/"*.cgi

  local user_lines=
  if [[ $(id -u) -eq 0 ]]; then
    user_lines=$'User www-data\nGroup www-data'
    chmod 755 "$d"
    chown -R www-data:www-data "$d/sp" "$d/run"
    chmod 644 "$d/idp-metadata.xml" "$d/sp-metadata.xml" "$d/htpasswd" "$d/htdigest"
  fi

  cat >"$d/apache2.conf" <<CONF
# generated by scripts/peers/saml/saml.sh — instance in $d
ServerRoot "$d"
DefaultRuntimeDir "$d/run"
PidFile "$d/run/apache2.pid"
Mutex file:$d/run default
ErrorLog "$d/error.log"
LogLevel warn auth_mellon:info ssl:warn
ServerName localhost
ServerTokens Prod
ServerSignature Off
Timeout 30
KeepAlive On
MaxKeepAliveRequests 100
KeepAliveTimeout 5
$user_lines

LoadModule mpm_prefork_module $MODDIR/mod_mpm_prefork.so
<IfModule !unixd_module>
    LoadModule unixd_module $MODDIR/mod_unixd.so
</IfModule>
LoadModule authz_core_module $MODDIR/mod_authz_core.so
LoadModule authz_user_module $MODDIR/mod_authz_user.so
LoadModule authn_core_module $MODDIR/mod_authn_core.so
LoadModule authn_file_module $MODDIR/mod_authn_file.so
LoadModule auth_basic_module $MODDIR/mod_auth_basic.so
LoadModule auth_digest_module $MODDIR/mod_auth_digest.so
LoadModule socache_shmcb_module $MODDIR/mod_socache_shmcb.so
LoadModule ssl_module $MODDIR/mod_ssl.so
LoadModule mime_module $MODDIR/mod_mime.so
LoadModule dir_module $MODDIR/mod_dir.so
LoadModule alias_module $MODDIR/mod_alias.so
LoadModule env_module $MODDIR/mod_env.so
LoadModule cgi_module $MODDIR/mod_cgi.so
<IfModule !log_config_module>
    LoadModule log_config_module $MODDIR/mod_log_config.so
</IfModule>
LoadModule auth_mellon_module $MODDIR/mod_auth_mellon.so

StartServers 2
MinSpareServers 1
MaxSpareServers 4
MaxRequestWorkers 20

TypesConfig "$d/mime.types"
AddDefaultCharset Off
LogFormat "%h %t \"%r\" %>s %b port=%p" mtls
CustomLog "$d/access.log" mtls
SSLPassPhraseDialog builtin
SSLSessionCache "shmcb:$d/run/ssl_scache(512000)"

MellonCacheSize 50
MellonLockFile "$d/run/mellon.lock"

<Directory />
    AllowOverride None
    Require all denied
</Directory>
<Directory "$d/htdocs">
    Require all granted
</Directory>
<Directory "$d/cgi-bin">
    Options +ExecCGI
    SetHandler cgi-script
    CGIPassAuth On
    Require all granted
</Directory>

Listen 127.0.0.1:$sp https
Listen 127.0.0.1:$other https

<VirtualHost 127.0.0.1:$sp>
    Include "$d/common.conf"
    <Location />
        MellonEnable info
        MellonEndpointPath /mellon
        MellonSPPrivateKeyFile "$d/sp/sp.key"
        MellonSPCertFile "$d/sp/sp.cert"
        MellonSPMetadataFile "$d/sp-metadata.xml"
        MellonIdPMetadataFile "$d/idp-metadata.xml"
        MellonSecureCookie On
        MellonUser "NAME_ID"
        MellonSetEnv "uid" "urn:oid:0.9.2342.19200300.100.1.1"
    </Location>
    ScriptAlias /secret "$d/cgi-bin/secret.cgi"
    <Location /secret>
        AuthType Mellon
        MellonEnable auth
        Require valid-user
    </Location>
</VirtualHost>

<VirtualHost 127.0.0.1:$other>
    Include "$d/common.conf"
</VirtualHost>
CONF

  cat >"$d/common.conf" <<CONF
ServerName localhost
DocumentRoot "$d/htdocs"
SSLEngine on
SSLProtocol -all +TLSv1.2 +TLSv1.3
SSLCertificateFile "$d/tls.pem"
SSLCertificateKeyFile "$d/tls.key"
ScriptAliasMatch "^/echo/?\$" "$d/cgi-bin/echo.cgi"
ScriptAliasMatch "^/set-cookies/?\$" "$d/cgi-bin/set-cookies.cgi"
ScriptAliasMatch "^/(basic-stay|digest-short)/?\$" "$d/cgi-bin/echo.cgi"
RedirectMatch 301 "^/r301\$" "/echo"
RedirectMatch 302 "^/r302\$" "/echo"
RedirectMatch 303 "^/r303\$" "/echo"
RedirectMatch 307 "^/r307\$" "/echo"
RedirectMatch 308 "^/r308\$" "/echo"
RedirectMatch 302 "^/to-other\$" "https://localhost:$other/echo"
RedirectMatch 302 "^/to-sp\$" "https://127.0.0.1:$sp/echo"
RedirectMatch 302 "^/to-other-basic\$" "https://localhost:$other/basic-stay"
RedirectMatch 302 "^/to-http\$" "http://127.0.0.1:$sp/echo"
RedirectMatch 302 "^/loop\$" "/loop"
<LocationMatch "^/basic-stay/?\$">
    AuthType Basic
    AuthName "mtls saml"
    AuthBasicProvider file
    AuthUserFile "$d/htpasswd"
    Require valid-user
</LocationMatch>
<LocationMatch "^/digest-short/?\$">
    AuthType Digest
    AuthName "mtls short"
    AuthDigestDomain /digest-short
    AuthDigestNonceLifetime 2
    AuthDigestProvider file
    AuthUserFile "$d/htdigest"
    Require valid-user
</LocationMatch>
CONF
}

peer_start() {
  check_deps
  need_certs server-chain.pem server.key
  make_instance_dir saml "$DIR"
  local d=$INST_DIR
  if read_env "$d" && pid_alive "${ENV_APACHE_PID:-}" "$d/apache2.conf"; then
    die "an instance is already running in $d; stop it first"
  fi
  local attempt base sp other idp apache_pid idp_pid
  for attempt in 1 2 3 4 5; do
    base=$(free_base 3); sp=$base; other=$((base + 1)); idp=$((base + 2))
    rm -rf "$d/sp"
    write_files "$d" "$sp" "$other" "$idp"
    : >"$d/error.log"
    setsid "$PYTHON" "$SAML_DIR/idp.py" serve --base "https://localhost:$idp" --port "$idp" --dir "$d" \
      </dev/null >>"$d/idp.log" 2>&1 &
    idp_pid=$!
    setsid "$HTTPD" -f "$d/apache2.conf" -DFOREGROUND </dev/null >"$d/startup.log" 2>&1 &
    apache_pid=$!
    if wait_ready 20 "$apache_pid" "$d/apache2.conf" "$sp" "$other" && wait_ready 20 "$idp_pid" "idp.py" "$idp" \
      && pid_alive "$apache_pid" "$d/apache2.conf" && pid_alive "$idp_pid" "idp.py"; then
      {
        echo "SP_PORT=$sp"
        echo "OTHER_PORT=$other"
        echo "IDP_PORT=$idp"
        echo "IDP_USER=$IDP_USER"
        echo "IDP_PASSWORD=$IDP_PASSWORD"
        echo "DIR=$d"
        echo "APACHE_PID=$apache_pid"
        echo "IDP_PID=$idp_pid"
      } | tee "$d/instance.env"
      return 0
    fi
    stop_pid "$apache_pid" "$d/apache2.conf" 5
    stop_pid "$idp_pid" "idp.py" 5
    if grep -qiE 'could not bind|Address already in use' "$d/startup.log" "$d/error.log" "$d/idp.log" 2>/dev/null; then
      note "ports $base.. busy, retrying"
      continue
    fi
    break
  done
  note "the SAML peers failed to start; see $d/startup.log, $d/error.log and $d/idp.log"
  tail -n 20 "$d/startup.log" "$d/error.log" "$d/idp.log" >&2 || true
  exit 1
}

peer_main "$@"
