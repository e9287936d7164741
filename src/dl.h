/*
 * Run-time loading of libcurl, libssh2 and libcrypto.
 *
 * bin/tpuctl is not linked with these three libraries: mapping and
 * relocating libcurl's dependency tree at exec costs ~15 ms, libssh2 and
 * libcrypto ~3 ms each, while "tpuctl --version", help, config and
 * completion need none of them (tests/bench/bench_startup.sh).  Each
 * library is instead loaded with dlopen(3) the first time one of its
 * functions is called, and all the functions tpuctl uses are resolved
 * with dlsym(3) at that moment, into one table per library.
 *
 * How the calls reach the tables: the Makefile compiles the C files of
 * src/ and cmd/ (except src/dl.c and src/dl_NAME.c) with "-include
 * src/dl.h".  This header
 * first includes the libraries' own headers (so every prototype, type and
 * constant is theirs, and later #includes of them are no-ops), declares
 * the tables, and only then defines each function name as a macro for
 * the table slot:
 *
 *     #define curl_easy_init TPU_DL_CURL_(curl_easy_init)
 *     -> (tpu_dl_curl()->curl_easy_init)
 *
 * Why this shape:
 *  - No symbol of the libraries is defined in our objects, so nothing can
 *    interpose them: the emulator and the unit tests, which link the real
 *    libraries and libtpuctl.a, get the real functions everywhere (their
 *    own sources are compiled without this header), and libtpuctl.a's
 *    calls go through dlopen(), which returns the copy already loaded.
 *  - The slots have the exact prototypes of the libraries' headers
 *    (__typeof__), variadic ones included, so curl_easy_setopt(h, opt,
 *    long) passes its arguments as a direct call would: no per-option
 *    dispatch to get wrong.  (Only curl's gcc type-check wrapper macros
 *    are lost in this build; the fuzz build compiles the sources without
 *    this header, against the real headers.)
 *  - Library macros that expand to functions (OPENSSL_free -> CRYPTO_free,
 *    EVP_PKEY_base_id -> EVP_PKEY_get_base_id, libssh2_channel_read ->
 *    libssh2_channel_read_ex, ...) are rescanned after expansion and so
 *    reach the table as well.
 *  - A function not listed here is not redirected: the call names the
 *    real symbol, and linking bin/tpuctl fails ("undefined reference to
 *    ..."), never silently.  To add one: one X() line in the list and one
 *    #define line below it.
 *
 * Failures: a library that cannot be loaded, or lacks a listed symbol,
 * ends the process with one line on stderr naming the soname, the Debian
 * package and the missing symbol, and exit status 1 (internal error).
 * This is the one exit outside cmd/main.c, like the x* allocators: the
 * callers are library calls with no error path of their own.
 *
 * Two functions never load libcrypto: OPENSSL_cleanse is explicit_bzero(3)
 * and RAND_bytes is getrandom(2) (the kernel CSPRNG that OpenSSL seeds
 * from), so wiping a buffer or naming a temporary file (config set) stays
 * cheap.
 */
#ifndef TPUCTL_DL_H
#define TPUCTL_DL_H

#include <stddef.h>

#include <curl/curl.h>
#include <libssh2.h>
#include <libssh2_sftp.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>

/* One library: its soname, the Debian package that ships it, and the
 * symbols to resolve into addrs[0..n-1]. */
struct tpu_dl_lib {
	const char *soname;
	const char *package;
	const char *const *names;
	void **addrs;
	size_t n;
};

/* dlopen lib->soname and dlsym every name.  0, or -1 with one line in msg
 * naming the soname, the package and (if that is the problem) the
 * missing symbol. */
int tpu_dl_open(const struct tpu_dl_lib *lib, char *msg, size_t len);
/* tpu_dl_open, or print "tpuctl: <msg>" on stderr and exit(1). */
void tpu_dl_need(const struct tpu_dl_lib *lib);

/* The libraries as tpuctl loads them (names and addrs filled on first
 * use of the table). */
extern const struct tpu_dl_lib tpu_dl_curl_lib, tpu_dl_ssh2_lib,
    tpu_dl_crypto_lib;

/* explicit_bzero(3), and getrandom(2) returning 1 on success as
 * RAND_bytes does (0 on failure). */
void tpu_dl_cleanse(void *p, size_t n);
int tpu_dl_rand_bytes(unsigned char *p, int n);

#define TPU_DL_CURL_SYMS(X)                                                    \
	X(curl_easy_cleanup)                                                   \
	X(curl_easy_duphandle)                                                 \
	X(curl_easy_escape)                                                    \
	X(curl_easy_getinfo)                                                   \
	X(curl_easy_init)                                                      \
	X(curl_easy_pause)                                                     \
	X(curl_easy_perform)                                                   \
	X(curl_easy_reset)                                                     \
	X(curl_easy_setopt)                                                    \
	X(curl_easy_strerror)                                                  \
	X(curl_easy_unescape)                                                  \
	X(curl_free)                                                           \
	X(curl_global_cleanup)                                                 \
	X(curl_global_init)                                                    \
	X(curl_multi_add_handle)                                               \
	X(curl_multi_cleanup)                                                  \
	X(curl_multi_info_read)                                                \
	X(curl_multi_init)                                                     \
	X(curl_multi_perform)                                                  \
	X(curl_multi_poll)                                                     \
	X(curl_multi_remove_handle)                                            \
	X(curl_multi_setopt)                                                   \
	X(curl_multi_strerror)                                                 \
	X(curl_multi_wakeup)                                                   \
	X(curl_slist_append)                                                   \
	X(curl_slist_free_all)                                                 \
	X(curl_url)                                                            \
	X(curl_url_cleanup)                                                    \
	X(curl_url_dup)                                                        \
	X(curl_url_get)                                                        \
	X(curl_url_set)                                                        \
	X(curl_version)                                                        \
	X(curl_version_info)

#define TPU_DL_SSH2_SYMS(X)                                                    \
	X(libssh2_agent_connect)                                               \
	X(libssh2_agent_disconnect)                                            \
	X(libssh2_agent_free)                                                  \
	X(libssh2_agent_get_identity)                                          \
	X(libssh2_agent_init)                                                  \
	X(libssh2_agent_list_identities)                                       \
	X(libssh2_agent_userauth)                                              \
	X(libssh2_channel_close)                                               \
	X(libssh2_channel_direct_tcpip_ex)                                     \
	X(libssh2_channel_eof)                                                 \
	X(libssh2_channel_flush_ex)                                            \
	X(libssh2_channel_free)                                                \
	X(libssh2_channel_get_exit_signal)                                     \
	X(libssh2_channel_get_exit_status)                                     \
	X(libssh2_channel_open_ex)                                             \
	X(libssh2_channel_process_startup)                                     \
	X(libssh2_channel_read_ex)                                             \
	X(libssh2_channel_request_pty_ex)                                      \
	X(libssh2_channel_request_pty_size_ex)                                 \
	X(libssh2_channel_send_eof)                                            \
	X(libssh2_channel_set_blocking)                                        \
	X(libssh2_channel_setenv_ex)                                           \
	X(libssh2_channel_wait_closed)                                         \
	X(libssh2_channel_wait_eof)                                            \
	X(libssh2_channel_window_read_ex)                                      \
	X(libssh2_channel_window_write_ex)                                     \
	X(libssh2_channel_write_ex)                                            \
	X(libssh2_exit)                                                        \
	X(libssh2_free)                                                        \
	X(libssh2_hostkey_hash)                                                \
	X(libssh2_init)                                                        \
	X(libssh2_keepalive_config)                                            \
	X(libssh2_keepalive_send)                                              \
	X(libssh2_session_abstract)                                            \
	X(libssh2_session_banner_set)                                          \
	X(libssh2_session_block_directions)                                    \
	X(libssh2_session_callback_set)                                        \
	X(libssh2_session_disconnect_ex)                                       \
	X(libssh2_session_free)                                                \
	X(libssh2_session_handshake)                                           \
	X(libssh2_session_hostkey)                                             \
	X(libssh2_session_init_ex)                                             \
	X(libssh2_session_last_errno)                                          \
	X(libssh2_session_last_error)                                          \
	X(libssh2_session_method_pref)                                         \
	X(libssh2_session_methods)                                             \
	X(libssh2_session_set_blocking)                                        \
	X(libssh2_session_set_timeout)                                         \
	X(libssh2_session_supported_algs)                                      \
	X(libssh2_sftp_close_handle)                                           \
	X(libssh2_sftp_fstat_ex)                                               \
	X(libssh2_sftp_fsync)                                                  \
	X(libssh2_sftp_init)                                                   \
	X(libssh2_sftp_last_error)                                             \
	X(libssh2_sftp_mkdir_ex)                                               \
	X(libssh2_sftp_open_ex)                                                \
	X(libssh2_sftp_read)                                                   \
	X(libssh2_sftp_readdir_ex)                                             \
	X(libssh2_sftp_rename_ex)                                              \
	X(libssh2_sftp_seek64)                                                 \
	X(libssh2_sftp_shutdown)                                               \
	X(libssh2_sftp_stat_ex)                                                \
	X(libssh2_sftp_unlink_ex)                                              \
	X(libssh2_sftp_write)                                                  \
	X(libssh2_userauth_authenticated)                                      \
	X(libssh2_userauth_list)                                               \
	X(libssh2_userauth_publickey_fromfile_ex)                              \
	X(libssh2_userauth_publickey_frommemory)                               \
	X(libssh2_version)

#define TPU_DL_CRYPTO_SYMS(X)                                                  \
	X(BIO_free)                                                            \
	X(BIO_new_mem_buf)                                                     \
	X(CRYPTO_free)                                                         \
	X(CRYPTO_malloc)                                                       \
	X(CRYPTO_memcmp)                                                       \
	X(CRYPTO_zalloc)                                                       \
	X(ERR_clear_error)                                                     \
	X(ERR_error_string_n)                                                  \
	X(ERR_get_error)                                                       \
	X(ERR_peek_last_error)                                                 \
	X(EVP_DecodeBlock)                                                     \
	X(EVP_Digest)                                                          \
	X(EVP_DigestFinal_ex)                                                  \
	X(EVP_DigestInit_ex)                                                   \
	X(EVP_DigestSign)                                                      \
	X(EVP_DigestSignInit)                                                  \
	X(EVP_DigestUpdate)                                                    \
	X(EVP_DigestVerify)                                                    \
	X(EVP_DigestVerifyInit)                                                \
	X(EVP_EncodeBlock)                                                     \
	X(EVP_MD_CTX_free)                                                     \
	X(EVP_MD_CTX_new)                                                      \
	X(EVP_PKEY_free)                                                       \
	X(EVP_PKEY_get_base_id)                                                \
	X(EVP_PKEY_get_raw_public_key)                                         \
	X(EVP_md5)                                                             \
	X(EVP_sha1)                                                            \
	X(EVP_sha256)                                                          \
	X(EVP_sha512)                                                          \
	X(OpenSSL_version)                                                     \
	X(PEM_read_bio_PrivateKey)

#define TPU_DL_SLOT(f) __typeof__(f) *f;
struct tpu_dl_curl {
	TPU_DL_CURL_SYMS(TPU_DL_SLOT)
};
struct tpu_dl_ssh2 {
	TPU_DL_SSH2_SYMS(TPU_DL_SLOT)
};
struct tpu_dl_crypto {
	TPU_DL_CRYPTO_SYMS(TPU_DL_SLOT)
};

/* The tables, loading the library on the first call (thread-safe). */
const struct tpu_dl_curl *tpu_dl_curl(void);
const struct tpu_dl_ssh2 *tpu_dl_ssh2(void);
const struct tpu_dl_crypto *tpu_dl_crypto(void);

/* The redirections; src/dl*.c and the tests that inspect the tables
 * define TPU_DL_IMPL to see the real names. */
#ifndef TPU_DL_IMPL
#define TPU_DL_CURL_(f) (tpu_dl_curl()->f)
#define TPU_DL_SSH2_(f) (tpu_dl_ssh2()->f)
#define TPU_DL_CRYPTO_(f) (tpu_dl_crypto()->f)

/* curl's gcc type-check wrappers (typecheck-gcc.h) would call the real
 * names. */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#undef curl_share_setopt
#undef curl_multi_setopt

#define curl_easy_cleanup TPU_DL_CURL_(curl_easy_cleanup)
#define curl_easy_duphandle TPU_DL_CURL_(curl_easy_duphandle)
#define curl_easy_escape TPU_DL_CURL_(curl_easy_escape)
#define curl_easy_getinfo TPU_DL_CURL_(curl_easy_getinfo)
#define curl_easy_init TPU_DL_CURL_(curl_easy_init)
#define curl_easy_pause TPU_DL_CURL_(curl_easy_pause)
#define curl_easy_perform TPU_DL_CURL_(curl_easy_perform)
#define curl_easy_reset TPU_DL_CURL_(curl_easy_reset)
#define curl_easy_setopt TPU_DL_CURL_(curl_easy_setopt)
#define curl_easy_strerror TPU_DL_CURL_(curl_easy_strerror)
#define curl_easy_unescape TPU_DL_CURL_(curl_easy_unescape)
#define curl_free TPU_DL_CURL_(curl_free)
#define curl_global_cleanup TPU_DL_CURL_(curl_global_cleanup)
#define curl_global_init TPU_DL_CURL_(curl_global_init)
#define curl_multi_add_handle TPU_DL_CURL_(curl_multi_add_handle)
#define curl_multi_cleanup TPU_DL_CURL_(curl_multi_cleanup)
#define curl_multi_info_read TPU_DL_CURL_(curl_multi_info_read)
#define curl_multi_init TPU_DL_CURL_(curl_multi_init)
#define curl_multi_perform TPU_DL_CURL_(curl_multi_perform)
#define curl_multi_poll TPU_DL_CURL_(curl_multi_poll)
#define curl_multi_remove_handle TPU_DL_CURL_(curl_multi_remove_handle)
#define curl_multi_setopt TPU_DL_CURL_(curl_multi_setopt)
#define curl_multi_strerror TPU_DL_CURL_(curl_multi_strerror)
#define curl_multi_wakeup TPU_DL_CURL_(curl_multi_wakeup)
#define curl_slist_append TPU_DL_CURL_(curl_slist_append)
#define curl_slist_free_all TPU_DL_CURL_(curl_slist_free_all)
#define curl_url TPU_DL_CURL_(curl_url)
#define curl_url_cleanup TPU_DL_CURL_(curl_url_cleanup)
#define curl_url_dup TPU_DL_CURL_(curl_url_dup)
#define curl_url_get TPU_DL_CURL_(curl_url_get)
#define curl_url_set TPU_DL_CURL_(curl_url_set)
#define curl_version TPU_DL_CURL_(curl_version)
#define curl_version_info TPU_DL_CURL_(curl_version_info)

#define libssh2_agent_connect TPU_DL_SSH2_(libssh2_agent_connect)
#define libssh2_agent_disconnect TPU_DL_SSH2_(libssh2_agent_disconnect)
#define libssh2_agent_free TPU_DL_SSH2_(libssh2_agent_free)
#define libssh2_agent_get_identity TPU_DL_SSH2_(libssh2_agent_get_identity)
#define libssh2_agent_init TPU_DL_SSH2_(libssh2_agent_init)
#define libssh2_agent_list_identities                                          \
	TPU_DL_SSH2_(libssh2_agent_list_identities)
#define libssh2_agent_userauth TPU_DL_SSH2_(libssh2_agent_userauth)
#define libssh2_channel_close TPU_DL_SSH2_(libssh2_channel_close)
#define libssh2_channel_direct_tcpip_ex                                        \
	TPU_DL_SSH2_(libssh2_channel_direct_tcpip_ex)
#define libssh2_channel_eof TPU_DL_SSH2_(libssh2_channel_eof)
#define libssh2_channel_flush_ex TPU_DL_SSH2_(libssh2_channel_flush_ex)
#define libssh2_channel_free TPU_DL_SSH2_(libssh2_channel_free)
#define libssh2_channel_get_exit_signal                                        \
	TPU_DL_SSH2_(libssh2_channel_get_exit_signal)
#define libssh2_channel_get_exit_status                                        \
	TPU_DL_SSH2_(libssh2_channel_get_exit_status)
#define libssh2_channel_open_ex TPU_DL_SSH2_(libssh2_channel_open_ex)
#define libssh2_channel_process_startup                                        \
	TPU_DL_SSH2_(libssh2_channel_process_startup)
#define libssh2_channel_read_ex TPU_DL_SSH2_(libssh2_channel_read_ex)
#define libssh2_channel_request_pty_ex                                         \
	TPU_DL_SSH2_(libssh2_channel_request_pty_ex)
#define libssh2_channel_request_pty_size_ex                                    \
	TPU_DL_SSH2_(libssh2_channel_request_pty_size_ex)
#define libssh2_channel_send_eof TPU_DL_SSH2_(libssh2_channel_send_eof)
#define libssh2_channel_set_blocking TPU_DL_SSH2_(libssh2_channel_set_blocking)
#define libssh2_channel_setenv_ex TPU_DL_SSH2_(libssh2_channel_setenv_ex)
#define libssh2_channel_wait_closed TPU_DL_SSH2_(libssh2_channel_wait_closed)
#define libssh2_channel_wait_eof TPU_DL_SSH2_(libssh2_channel_wait_eof)
#define libssh2_channel_window_read_ex                                         \
	TPU_DL_SSH2_(libssh2_channel_window_read_ex)
#define libssh2_channel_window_write_ex                                        \
	TPU_DL_SSH2_(libssh2_channel_window_write_ex)
#define libssh2_channel_write_ex TPU_DL_SSH2_(libssh2_channel_write_ex)
#define libssh2_exit TPU_DL_SSH2_(libssh2_exit)
#define libssh2_free TPU_DL_SSH2_(libssh2_free)
#define libssh2_hostkey_hash TPU_DL_SSH2_(libssh2_hostkey_hash)
#define libssh2_init TPU_DL_SSH2_(libssh2_init)
#define libssh2_keepalive_config TPU_DL_SSH2_(libssh2_keepalive_config)
#define libssh2_keepalive_send TPU_DL_SSH2_(libssh2_keepalive_send)
#define libssh2_session_abstract TPU_DL_SSH2_(libssh2_session_abstract)
#define libssh2_session_banner_set TPU_DL_SSH2_(libssh2_session_banner_set)
#define libssh2_session_block_directions                                       \
	TPU_DL_SSH2_(libssh2_session_block_directions)
#define libssh2_session_callback_set TPU_DL_SSH2_(libssh2_session_callback_set)
#define libssh2_session_disconnect_ex                                          \
	TPU_DL_SSH2_(libssh2_session_disconnect_ex)
#define libssh2_session_free TPU_DL_SSH2_(libssh2_session_free)
#define libssh2_session_handshake TPU_DL_SSH2_(libssh2_session_handshake)
#define libssh2_session_hostkey TPU_DL_SSH2_(libssh2_session_hostkey)
#define libssh2_session_init_ex TPU_DL_SSH2_(libssh2_session_init_ex)
#define libssh2_session_last_errno TPU_DL_SSH2_(libssh2_session_last_errno)
#define libssh2_session_last_error TPU_DL_SSH2_(libssh2_session_last_error)
#define libssh2_session_method_pref TPU_DL_SSH2_(libssh2_session_method_pref)
#define libssh2_session_methods TPU_DL_SSH2_(libssh2_session_methods)
#define libssh2_session_set_blocking TPU_DL_SSH2_(libssh2_session_set_blocking)
#define libssh2_session_set_timeout TPU_DL_SSH2_(libssh2_session_set_timeout)
#define libssh2_session_supported_algs                                         \
	TPU_DL_SSH2_(libssh2_session_supported_algs)
#define libssh2_sftp_close_handle TPU_DL_SSH2_(libssh2_sftp_close_handle)
#define libssh2_sftp_fstat_ex TPU_DL_SSH2_(libssh2_sftp_fstat_ex)
#define libssh2_sftp_fsync TPU_DL_SSH2_(libssh2_sftp_fsync)
#define libssh2_sftp_init TPU_DL_SSH2_(libssh2_sftp_init)
#define libssh2_sftp_last_error TPU_DL_SSH2_(libssh2_sftp_last_error)
#define libssh2_sftp_mkdir_ex TPU_DL_SSH2_(libssh2_sftp_mkdir_ex)
#define libssh2_sftp_open_ex TPU_DL_SSH2_(libssh2_sftp_open_ex)
#define libssh2_sftp_read TPU_DL_SSH2_(libssh2_sftp_read)
#define libssh2_sftp_readdir_ex TPU_DL_SSH2_(libssh2_sftp_readdir_ex)
#define libssh2_sftp_rename_ex TPU_DL_SSH2_(libssh2_sftp_rename_ex)
#define libssh2_sftp_seek64 TPU_DL_SSH2_(libssh2_sftp_seek64)
#define libssh2_sftp_shutdown TPU_DL_SSH2_(libssh2_sftp_shutdown)
#define libssh2_sftp_stat_ex TPU_DL_SSH2_(libssh2_sftp_stat_ex)
#define libssh2_sftp_unlink_ex TPU_DL_SSH2_(libssh2_sftp_unlink_ex)
#define libssh2_sftp_write TPU_DL_SSH2_(libssh2_sftp_write)
#define libssh2_userauth_authenticated                                         \
	TPU_DL_SSH2_(libssh2_userauth_authenticated)
#define libssh2_userauth_list TPU_DL_SSH2_(libssh2_userauth_list)
#define libssh2_userauth_publickey_fromfile_ex                                 \
	TPU_DL_SSH2_(libssh2_userauth_publickey_fromfile_ex)
#define libssh2_userauth_publickey_frommemory                                  \
	TPU_DL_SSH2_(libssh2_userauth_publickey_frommemory)
#define libssh2_version TPU_DL_SSH2_(libssh2_version)

#define BIO_free TPU_DL_CRYPTO_(BIO_free)
#define BIO_new_mem_buf TPU_DL_CRYPTO_(BIO_new_mem_buf)
#define CRYPTO_free TPU_DL_CRYPTO_(CRYPTO_free)
#define CRYPTO_malloc TPU_DL_CRYPTO_(CRYPTO_malloc)
#define CRYPTO_memcmp TPU_DL_CRYPTO_(CRYPTO_memcmp)
#define CRYPTO_zalloc TPU_DL_CRYPTO_(CRYPTO_zalloc)
#define ERR_clear_error TPU_DL_CRYPTO_(ERR_clear_error)
#define ERR_error_string_n TPU_DL_CRYPTO_(ERR_error_string_n)
#define ERR_get_error TPU_DL_CRYPTO_(ERR_get_error)
#define ERR_peek_last_error TPU_DL_CRYPTO_(ERR_peek_last_error)
#define EVP_DecodeBlock TPU_DL_CRYPTO_(EVP_DecodeBlock)
#define EVP_Digest TPU_DL_CRYPTO_(EVP_Digest)
#define EVP_DigestFinal_ex TPU_DL_CRYPTO_(EVP_DigestFinal_ex)
#define EVP_DigestInit_ex TPU_DL_CRYPTO_(EVP_DigestInit_ex)
#define EVP_DigestSign TPU_DL_CRYPTO_(EVP_DigestSign)
#define EVP_DigestSignInit TPU_DL_CRYPTO_(EVP_DigestSignInit)
#define EVP_DigestUpdate TPU_DL_CRYPTO_(EVP_DigestUpdate)
#define EVP_DigestVerify TPU_DL_CRYPTO_(EVP_DigestVerify)
#define EVP_DigestVerifyInit TPU_DL_CRYPTO_(EVP_DigestVerifyInit)
#define EVP_EncodeBlock TPU_DL_CRYPTO_(EVP_EncodeBlock)
#define EVP_MD_CTX_free TPU_DL_CRYPTO_(EVP_MD_CTX_free)
#define EVP_MD_CTX_new TPU_DL_CRYPTO_(EVP_MD_CTX_new)
#define EVP_PKEY_free TPU_DL_CRYPTO_(EVP_PKEY_free)
#define EVP_PKEY_get_base_id TPU_DL_CRYPTO_(EVP_PKEY_get_base_id)
#define EVP_PKEY_get_raw_public_key TPU_DL_CRYPTO_(EVP_PKEY_get_raw_public_key)
#define EVP_md5 TPU_DL_CRYPTO_(EVP_md5)
#define EVP_sha1 TPU_DL_CRYPTO_(EVP_sha1)
#define EVP_sha256 TPU_DL_CRYPTO_(EVP_sha256)
#define EVP_sha512 TPU_DL_CRYPTO_(EVP_sha512)
#define OpenSSL_version TPU_DL_CRYPTO_(OpenSSL_version)
#define PEM_read_bio_PrivateKey TPU_DL_CRYPTO_(PEM_read_bio_PrivateKey)

#define OPENSSL_cleanse tpu_dl_cleanse
#define RAND_bytes tpu_dl_rand_bytes
#endif /* !TPU_DL_IMPL */

#endif
