"""Which Debian package provides a missing C header, build tool or shared library."""

from __future__ import annotations

import re

# C headers (as named in "fatal error: X: No such file or directory").
HEADER_PACKAGES: dict[str, str] = {
    "Python.h": "python3-dev",
    "libxml/xmlversion.h": "libxml2-dev",
    "libxml/parser.h": "libxml2-dev",
    "libxslt/xsltconfig.h": "libxslt1-dev",
    "libxslt/xslt.h": "libxslt1-dev",
    "xmlsec/xmlsec.h": "libxmlsec1-dev",
    "ffi.h": "libffi-dev",
    "openssl/ssl.h": "libssl-dev",
    "openssl/opensslv.h": "libssl-dev",
    "openssl/aes.h": "libssl-dev",
    "zlib.h": "zlib1g-dev",
    "bzlib.h": "libbz2-dev",
    "lzma.h": "liblzma-dev",
    "jpeglib.h": "libjpeg-dev",
    "png.h": "libpng-dev",
    "tiffio.h": "libtiff-dev",
    "webp/decode.h": "libwebp-dev",
    "ft2build.h": "libfreetype-dev",
    "yaml.h": "libyaml-dev",
    "sqlite3.h": "libsqlite3-dev",
    "libpq-fe.h": "libpq-dev",
    "pg_config.h": "libpq-dev",
    "mysql.h": "default-libmysqlclient-dev",
    "mysql/mysql.h": "default-libmysqlclient-dev",
    "krb5.h": "libkrb5-dev",
    "gssapi/gssapi.h": "libkrb5-dev",
    "ldap.h": "libldap2-dev",
    "lber.h": "libldap2-dev",
    "sasl/sasl.h": "libsasl2-dev",
    "curl/curl.h": "libcurl4-openssl-dev",
    "gmp.h": "libgmp-dev",
    "mpfr.h": "libmpfr-dev",
    "mpc.h": "libmpc-dev",
    "hdf5.h": "libhdf5-dev",
    "cairo.h": "libcairo2-dev",
    "cairo/cairo.h": "libcairo2-dev",
    "graphviz/cgraph.h": "libgraphviz-dev",
    "snappy-c.h": "libsnappy-dev",
    "lz4.h": "liblz4-dev",
    "zstd.h": "libzstd-dev",
    "portaudio.h": "portaudio19-dev",
    "geos_c.h": "libgeos-dev",
    "gdal.h": "libgdal-dev",
    "proj.h": "libproj-dev",
    "uuid/uuid.h": "uuid-dev",
    "readline/readline.h": "libreadline-dev",
    "ncurses.h": "libncurses-dev",
    "curses.h": "libncurses-dev",
    "magic.h": "libmagic-dev",
    "sndfile.h": "libsndfile1-dev",
    "systemd/sd-daemon.h": "libsystemd-dev",
    "systemd/sd-journal.h": "libsystemd-dev",
    "dbus/dbus.h": "libdbus-1-dev",
    "glib.h": "libglib2.0-dev",
    "leveldb/db.h": "libleveldb-dev",
    "zmq.h": "libzmq3-dev",
    "libusb.h": "libusb-1.0-0-dev",
    "libusb-1.0/libusb.h": "libusb-1.0-0-dev",
    "cups/cups.h": "libcups2-dev",
    "unicode/utypes.h": "libicu-dev",
    "expat.h": "libexpat1-dev",
    "pcre.h": "libpcre3-dev",
    "fuse.h": "libfuse-dev",
    "alsa/asoundlib.h": "libasound2-dev",
    "X11/Xlib.h": "libx11-dev",
    "GL/gl.h": "libgl-dev",
    "cblas.h": "libopenblas-dev",
    "lapacke.h": "liblapacke-dev",
    "fftw3.h": "libfftw3-dev",
    "libmemcached/memcached.h": "libmemcached-dev",
    "sodium.h": "libsodium-dev",
    "gpgme.h": "libgpgme-dev",
    "attr/xattr.h": "libattr1-dev",
    "acl/libacl.h": "libacl1-dev",
    "linux/videodev2.h": "linux-libc-dev",
    "fuse/fuse.h": "libfuse-dev",
    "fuse_lowlevel.h": "libfuse-dev",
    "fuse3/fuse.h": "libfuse3-dev",
    "fuse3/fuse_lowlevel.h": "libfuse3-dev",
    "libudev.h": "libudev-dev",
    "pcap.h": "libpcap-dev",
    "pcap/pcap.h": "libpcap-dev",
    "security/pam_appl.h": "libpam0g-dev",
    "jansson.h": "libjansson-dev",
    "argon2.h": "libargon2-dev",
    "blkid/blkid.h": "libblkid-dev",
    "selinux/selinux.h": "libselinux1-dev",
    "sys/capability.h": "libcap-dev",
    "seccomp.h": "libseccomp-dev",
    "netcdf.h": "libnetcdf-dev",
    "gsl/gsl_math.h": "libgsl-dev",
    "hiredis/hiredis.h": "libhiredis-dev",
    "event2/event.h": "libevent-dev",
    "uv.h": "libuv1-dev",
    "lzo/lzo1x.h": "liblzo2-dev",
    "brotli/decode.h": "libbrotli-dev",
    "gnutls/gnutls.h": "libgnutls28-dev",
    "archive.h": "libarchive-dev",
    "lmdb.h": "liblmdb-dev",
    "xxhash.h": "libxxhash-dev",
    "yajl/yajl_parse.h": "libyajl-dev",
    "libssh2.h": "libssh2-1-dev",
    "libssh/libssh.h": "libssh-dev",
    "git2.h": "libgit2-dev",
    "pcre2.h": "libpcre2-dev",
    "re2/re2.h": "libre2-dev",
    "lcms2.h": "liblcms2-dev",
    "openjpeg.h": "libopenjp2-7-dev",
    "harfbuzz/hb.h": "libharfbuzz-dev",
    "fribidi.h": "libfribidi-dev",
    "ogg/ogg.h": "libogg-dev",
    "vorbis/codec.h": "libvorbis-dev",
    "opus/opus.h": "libopus-dev",
    "FLAC/all.h": "libflac-dev",
    "mpg123.h": "libmpg123-dev",
    "samplerate.h": "libsamplerate0-dev",
    "jack/jack.h": "libjack-jackd2-dev",
    "pulse/pulseaudio.h": "libpulse-dev",
    "SDL2/SDL.h": "libsdl2-dev",
    "SDL.h": "libsdl2-dev",
    "libavcodec/avcodec.h": "libavcodec-dev",
    "libavformat/avformat.h": "libavformat-dev",
    "libavutil/avutil.h": "libavutil-dev",
    "libswscale/swscale.h": "libswscale-dev",
    "tcl.h": "tcl-dev",
    "tk.h": "tk-dev",
    "fitsio.h": "libcfitsio-dev",
    "mpi.h": "libopenmpi-dev",
    "cmark.h": "libcmark-dev",
    "gd.h": "libgd-dev",
    "libexif/exif-data.h": "libexif-dev",
    "libssh2_sftp.h": "libssh2-1-dev",
    "tidy.h": "libtidy-dev",
    "enchant-2/enchant.h": "libenchant-2-dev",
    "hunspell/hunspell.h": "libhunspell-dev",
    "aspell.h": "libaspell-dev",
    "libnetfilter_queue/libnetfilter_queue.h": "libnetfilter-queue-dev",
    "liburing.h": "liburing-dev",
    "libaio.h": "libaio-dev",
    "numa.h": "libnuma-dev",
    "ibverbs.h": "libibverbs-dev",
    "infiniband/verbs.h": "libibverbs-dev",
    "bluetooth/bluetooth.h": "libbluetooth-dev",
    "libevdev/libevdev.h": "libevdev-dev",
    "gpiod.h": "libgpiod-dev",
    "i2c/smbus.h": "libi2c-dev",
    "ftdi.h": "libftdi1-dev",
    "libftdi1/ftdi.h": "libftdi1-dev",
    "hidapi/hidapi.h": "libhidapi-dev",
    "libvirt/libvirt.h": "libvirt-dev",
    "augeas.h": "libaugeas-dev",
    "krb5/krb5.h": "libkrb5-dev",
}

# Commands that are not on PATH (pkg-config, compilers, tools tests shell out to).
TOOL_PACKAGES: dict[str, str] = {
    "pkg-config": "pkg-config",
    "gcc": "gcc",
    "cc": "gcc",
    "g++": "g++",
    "c++": "g++",
    "gfortran": "gfortran",
    "make": "make",
    "cmake": "cmake",
    "swig": "swig",
    "git": "git",
    "hg": "mercurial",
    "svn": "subversion",
    "dot": "graphviz",
    "xml2-config": "libxml2-dev",
    "xslt-config": "libxslt1-dev",
    "pg_config": "libpq-dev",
    "mysql_config": "default-libmysqlclient-dev",
    "mariadb_config": "libmariadb-dev-compat",
    "curl-config": "libcurl4-openssl-dev",
    "gdal-config": "libgdal-dev",
    "geos-config": "libgeos-dev",
    "rustc": "rustc",
    "cargo": "cargo",
    "ffmpeg": "ffmpeg",
    "convert": "imagemagick",
    "pandoc": "pandoc",
    "latex": "texlive-latex-base",
    "xvfb-run": "xvfb",
    "Xvfb": "xvfb",
    "unzip": "unzip",
    "zip": "zip",
    "bzr": "bzr",
    "fossil": "fossil",
    "tesseract": "tesseract-ocr",
    "gpg": "gnupg",
    "openssl": "openssl",
    "ssh": "openssh-client",
    "rsync": "rsync",
    "msgfmt": "gettext",
    "sqlite3": "sqlite3",
    "redis-server": "redis-server",
    "memcached": "memcached",
    "node": "nodejs",
    "npm": "npm",
    "java": "default-jre-headless",
    "file": "file",
}

# Shared libraries a wheel or ctypes loads at run time (by soname prefix).
LIBRARY_PACKAGES: dict[str, str] = {
    "libGL.so": "libgl1",
    "libEGL.so": "libegl1",
    "libglib-2.0.so": "libglib2.0-0",
    "libgthread-2.0.so": "libglib2.0-0",
    "libgomp.so": "libgomp1",
    "libgfortran.so": "libgfortran5",
    "libsndfile.so": "libsndfile1",
    "libmagic.so": "libmagic1",
    "libgeos_c.so": "libgeos-c1v5",
    "libzbar.so": "libzbar0",
    "libcairo.so": "libcairo2",
    "libpango-1.0.so": "libpango-1.0-0",
    "libX11.so": "libx11-6",
    "libXext.so": "libxext6",
    "libXrender.so": "libxrender1",
    "libSM.so": "libsm6",
    "libICE.so": "libice6",
    "libxml2.so": "libxml2",
    "libxslt.so": "libxslt1.1",
    "libjpeg.so": "libjpeg62-turbo",
    "libpq.so": "libpq5",
    "libfontconfig.so": "libfontconfig1",
    "libfreetype.so": "libfreetype6",
    "libportaudio.so": "libportaudio2",
    "libdbus-1.so": "libdbus-1-3",
    "libmysqlclient.so": "libmariadb3",
    "libmariadb.so": "libmariadb3",
    "libsqlite3.so": "libsqlite3-0",
    "libyaml-0.so": "libyaml-0-2",
    "libopenblas.so": "libopenblas0",
    "liblapack.so": "liblapack3",
    "libblas.so": "libblas3",
    "libgdal.so": "libgdal32",
    "libproj.so": "libproj25",
    "libspatialindex_c.so": "libspatialindex-c6",
    "libtesseract.so": "libtesseract5",
    "libsodium.so": "libsodium23",
    "libusb-1.0.so": "libusb-1.0-0",
    "libasound.so": "libasound2",
    "libnss3.so": "libnss3",
    "libgssapi_krb5.so": "libgssapi-krb5-2",
    "libmemcached.so": "libmemcached11",
    "libzmq.so": "libzmq5",
    "libsnappy.so": "libsnappy1v5",
    "libgmp.so": "libgmp10",
    "libffi.so": "libffi8",
}

# Development packages by a library's short name, as linkers ("cannot find -llz4"),
# pkg-config ("Package libffi was not found") and build scripts ("Could not find lz4
# lib/headers") name them.
DEV_PACKAGES: dict[str, str] = {
    "lz4": "liblz4-dev", "zstd": "libzstd-dev", "snappy": "libsnappy-dev", "z": "zlib1g-dev",
    "zlib": "zlib1g-dev", "bz2": "libbz2-dev", "lzma": "liblzma-dev", "ssl": "libssl-dev",
    "crypto": "libssl-dev", "openssl": "libssl-dev", "ffi": "libffi-dev", "xml2": "libxml2-dev",
    "xml-2.0": "libxml2-dev", "xslt": "libxslt1-dev", "exslt": "libxslt1-dev",
    "jpeg": "libjpeg-dev", "png": "libpng-dev", "png16": "libpng-dev", "tiff": "libtiff-dev",
    "webp": "libwebp-dev", "freetype": "libfreetype-dev", "freetype2": "libfreetype-dev",
    "yaml": "libyaml-dev", "yaml-0.1": "libyaml-dev", "sqlite3": "libsqlite3-dev",
    "pq": "libpq-dev", "mysqlclient": "default-libmysqlclient-dev",
    "mariadb": "libmariadb-dev", "curl": "libcurl4-openssl-dev", "gmp": "libgmp-dev",
    "mpfr": "libmpfr-dev", "hdf5": "libhdf5-dev", "cairo": "libcairo2-dev",
    "geos_c": "libgeos-dev", "gdal": "libgdal-dev", "proj": "libproj-dev", "uuid": "uuid-dev",
    "readline": "libreadline-dev", "ncurses": "libncurses-dev", "magic": "libmagic-dev",
    "sndfile": "libsndfile1-dev", "systemd": "libsystemd-dev", "xmlsec1": "libxmlsec1-dev",
    "krb5": "libkrb5-dev", "gssapi_krb5": "libkrb5-dev", "ldap": "libldap2-dev",
    "sasl2": "libsasl2-dev", "portaudio": "portaudio19-dev", "portaudio-2.0": "portaudio19-dev",
    "sodium": "libsodium-dev", "zmq": "libzmq3-dev", "libzmq": "libzmq3-dev",
    "memcached": "libmemcached-dev", "openblas": "libopenblas-dev", "lapack": "liblapack-dev",
    "blas": "libblas-dev", "usb-1.0": "libusb-1.0-0-dev", "dbus-1": "libdbus-1-dev",
    "glib-2.0": "libglib2.0-dev", "gobject-introspection-1.0": "libgirepository1.0-dev",
    "libvirt": "libvirt-dev", "icu-uc": "libicu-dev", "icu": "libicu-dev", "expat": "libexpat1-dev",
    "leveldb": "libleveldb-dev", "lmdb": "liblmdb-dev", "xxhash": "libxxhash-dev",
    "fuse": "libfuse-dev", "fuse3": "libfuse3-dev", "udev": "libudev-dev", "pcap": "libpcap-dev",
    "pam": "libpam0g-dev", "jansson": "libjansson-dev", "argon2": "libargon2-dev",
    "blkid": "libblkid-dev", "selinux": "libselinux1-dev", "cap": "libcap-dev",
    "seccomp": "libseccomp-dev", "netcdf": "libnetcdf-dev", "gsl": "libgsl-dev",
    "hiredis": "libhiredis-dev", "event": "libevent-dev", "uv": "libuv1-dev",
    "lzo2": "liblzo2-dev", "brotlidec": "libbrotli-dev", "brotlienc": "libbrotli-dev",
    "gnutls": "libgnutls28-dev", "archive": "libarchive-dev", "ssh2": "libssh2-1-dev",
    "ssh": "libssh-dev", "git2": "libgit2-dev", "pcre2-8": "libpcre2-dev", "pcre": "libpcre3-dev",
    "re2": "libre2-dev", "lcms2": "liblcms2-dev", "openjp2": "libopenjp2-7-dev",
    "harfbuzz": "libharfbuzz-dev", "fribidi": "libfribidi-dev", "ogg": "libogg-dev",
    "vorbis": "libvorbis-dev", "opus": "libopus-dev", "flac": "libflac-dev",
    "mpg123": "libmpg123-dev", "samplerate": "libsamplerate0-dev", "jack": "libjack-jackd2-dev",
    "pulse": "libpulse-dev", "sdl2": "libsdl2-dev", "avcodec": "libavcodec-dev",
    "avformat": "libavformat-dev", "avutil": "libavutil-dev", "swscale": "libswscale-dev",
    "tcl": "tcl-dev", "tk": "tk-dev", "cfitsio": "libcfitsio-dev", "cmark": "libcmark-dev",
    "gdlib": "libgd-dev", "gd": "libgd-dev", "exif": "libexif-dev", "tidy": "libtidy-dev",
    "enchant-2": "libenchant-2-dev", "hunspell": "libhunspell-dev", "aspell": "libaspell-dev",
    "uring": "liburing-dev", "aio": "libaio-dev", "numa": "libnuma-dev", "ibverbs": "libibverbs-dev",
    "bluetooth": "libbluetooth-dev", "evdev": "libevdev-dev", "gpiod": "libgpiod-dev",
    "ftdi1": "libftdi1-dev", "hidapi-libusb": "libhidapi-dev", "hidapi-hidraw": "libhidapi-dev",
    "augeas": "libaugeas-dev", "gtk+-3.0": "libgtk-3-dev", "gtk4": "libgtk-4-dev",
    "cairo-gobject": "libcairo2-dev", "pangocairo": "libpango1.0-dev", "pango": "libpango1.0-dev",
    "poppler-glib": "libpoppler-glib-dev", "gstreamer-1.0": "libgstreamer1.0-dev",
    "libsecret-1": "libsecret-1-dev", "secret-1": "libsecret-1-dev", "nss": "libnss3-dev",
}
_LINK = re.compile(r"cannot find -l([\w.+-]+)")
_PKG_CONFIG = re.compile(r"Package '?([\w.+-]+)'?(?:,| was not found in the pkg-config search path)"
                         r"(?:[^\n]*not found)?")
_BUILD_SCRIPT = re.compile(r"(?:Could not|Cannot|Unable to) find (?:the )?([\w.+-]+) "
                           r"(?:lib(?:rary|raries)?|headers?|development files)", re.IGNORECASE)

# gcc's and clang's words for a missing header
_HEADER = re.compile(r"fatal error: (?:([\w/.+-]+\.h): No such file or directory|'([\w/.+-]+\.h)' "
                     r"file not found)")
_TOOL = re.compile(
    r"(?:(?:^|[\s:'\"])([\w.+-]+): (?:command )?not found"
    r"|command '([\w.+-]+)' failed: No such file or directory"
    r"|No such file or directory: '([\w.+-]+)'"
    r"|failed to execute (?:PosixPath\()?'([\w.+-]+)'"
    r"|([\w.+-]+) executable not found"
    r"|Did not find ([\w.+-]+) on PATH"
    r"|The '([\w.+-]+)' command is not available)",
    re.MULTILINE,
)
_LIBRARY = re.compile(r"([\w.+-]+\.so)(?:\.[\d.]+)?: cannot open shared object file")


def debian_packages_for(output: str) -> list[str]:
    """Debian packages whose absence explains `output` (missing headers, tools, libraries)."""
    wanted: list[str] = []
    for header in missing_headers(output):
        if header in HEADER_PACKAGES:
            wanted.append(HEADER_PACKAGES[header])
    for groups in _TOOL.findall(output):
        tool = next((g for g in groups if g), "")
        if tool in TOOL_PACKAGES:
            wanted.append(TOOL_PACKAGES[tool])
    for library in _LIBRARY.findall(output):
        for prefix, package in LIBRARY_PACKAGES.items():
            if library.startswith(prefix.removesuffix(".so")) and library.endswith(".so"):
                wanted.append(package)
                break
    for pattern in (_LINK, _PKG_CONFIG, _BUILD_SCRIPT):
        for name in pattern.findall(output):
            key = name.lower()
            dev = DEV_PACKAGES.get(key) or DEV_PACKAGES.get(key.removeprefix("lib"))
            if dev:
                wanted.append(dev)
    if "Please make sure the libxml2 and libxslt development packages are installed" in output:
        wanted += ["libxml2-dev", "libxslt1-dev"]
    return list(dict.fromkeys(wanted))


def missing_tools(output: str) -> list[str]:
    """Programs `output` says are not there and no Debian package of ours provides."""
    tools = (next((g for g in groups if g), "") for groups in _TOOL.findall(output))
    return list(dict.fromkeys(t for t in tools if t and t not in TOOL_PACKAGES))


def missing_headers(output: str) -> list[str]:
    """Header names reported missing by the C compiler."""
    return list(dict.fromkeys(gcc or clang for gcc, clang in _HEADER.findall(output)))


def missing_system_parts(output: str) -> list[str]:
    """What a build says the system lacks, named as it names it (``header fuse.h``,
    ``pkg-config module fuse3``, ``library -lfoo``): also what no table here maps."""
    parts = [f"header {h}" for h in missing_headers(output)]
    parts += [f"pkg-config module {m}" for m in _PKG_CONFIG.findall(output)]
    parts += [f"library -l{name}" for name in _LINK.findall(output)]
    return list(dict.fromkeys(parts))
