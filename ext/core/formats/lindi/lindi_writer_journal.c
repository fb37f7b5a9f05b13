/* The LINDI writer's journal (lindi_writer_impl.h; the protocol: lindi_writer.c): written
 * and synced before the commit point, naming every step left; a journal a crash left is
 * rolled forward (entry flipped) or back (not flipped) by the next writer, under the
 * lock, and only when it proves to be this archive's (lindi_journal.c checks it). */
#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lindi_writer_impl.h"
#include "formats/tar/tar.h"
#include "store/store.h"
#include "util/base64.h"
#include "util/pyjson.h"

/* Journal (lindi_journal.c): replaced atomically — written to <journal>.tmp, fsync,
 * renamed over the journal's name. Only the lock holder writes it, so one fixed name
 * suffices: a kill leaves at most that one file, which the next writer removes before
 * making its own (unlink removes a planted symlink itself; O_EXCL | O_NOFOLLOW never
 * follows one planted meanwhile). It names this archive (device, inode) and the entry the
 * transaction started from. */
vd_code lw_write_journal(lindi_writer *w, lindi_journal *j, vd_err *err) {
  j->gen = w->gen;
  memcpy(j->entry_before, w->entry_seen, LINDI_ENTRY_SIZE);
  vd_buf out = {0};
  char *tmp = malloc(strlen(w->journal) + 8);
  if (!tmp || lindi_journal_format(j, (uint64_t)w->dev_seen, (uint64_t)w->ino_seen, &out, err)) {
    vd_buf_free(&out);
    free(tmp);
    return err->code ? err->code : vd_nomem(err);
  }
  sprintf(tmp, "%s.tmp", w->journal);
  vd_code rc = VD_OK;
  if (unlink(tmp) != 0 && errno != ENOENT) rc = lw_sys_fail(err, tmp, "cannot remove a stale journal temporary");
  int fd = rc ? -1 : open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (rc)
    ;
  else if (fd < 0)
    rc = lw_sys_fail(err, w->journal, "cannot write the journal");
  else {
    rc = lw_pw(fd, out.data, out.len, 0, tmp, err);
    if (!rc && (fchmod(fd, 0644) || (lw_write_step(), fsync(fd)))) rc = lw_sys_fail(err, tmp, "cannot sync the journal");
    close(fd);
    if (!rc && (lw_write_step(), rename(tmp, w->journal))) rc = lw_sys_fail(err, w->journal, "cannot install the journal");
    if (rc) unlink(tmp);
    else lw_sync_dir(w->journal);
  }
  vd_buf_free(&out);
  free(tmp);
  return rc;
}

void lw_drop_journal(lindi_writer *w) {
  unlink(w->journal);
  lw_sync_dir(w->journal);
}

vd_code lw_cut_back(lindi_writer *w, int64_t end, vd_err *err) {
  /* everything past end+1024 belongs to the unfinished transaction; [end, end+1024) was
   * never written, but zero it by truncating through it to be sure */
  if (ftruncate(w->fd, end) || ftruncate(w->fd, end + 1024)) return lw_sys_fail(err, w->path, "cannot truncate");
  return lw_sync_fd(w->fd, w->path, err);
}

/* Steps after the journal (which makes the transaction committed), in this order because
 * every byte the new entry points to must be in the file before the entry names it: the
 * held blocks at E (the second first, so that tar meets a zero block at E until the first
 * lands: tar's commit point), the reused index region's header renamed back to
 * .tar_index.json, then the commit write (the entry: lindi's commit point), then the
 * trash, header renames only (the bytes stay, for readers that read the old entry).
 * Idempotent: recovery runs it again from the start. */
vd_code lw_finish(lindi_writer *w, const lindi_journal *j, vd_err *err) {
  int64_t end = j->end, revive = j->revive;
  const unsigned char *hold = j->hold;
  if (j->new_end > end) {
    if (lw_pw(w->fd, hold + 512, 512, end + 512, w->path, err)) return err->code;
    lw_crashpoint(5);
    if (lw_pw(w->fd, hold, 512, end, w->path, err)) return err->code;
  }
  if (revive >= 0) { /* the reused region's header names the index again (before the old one is trashed) */
    unsigned char h[TAR_BLOCK];
    if (lw_pr(w->fd, h, TAR_BLOCK, revive, w->path, err) || tar_rename(h, LINDI_INDEX_NAME, err) ||
        lw_pw(w->fd, h, TAR_BLOCK, revive, w->path, err))
      return err->code;
  }
  if (j->commit_len && (lw_pw(w->fd, j->commit, j->commit_len, j->commit_at, w->path, err) ||
                        lw_sync_fd(w->fd, w->path, err)))
    return err->code;
  if (j->has_entry && lw_pw(w->fd, j->entry, LINDI_ENTRY_SIZE, 512, w->path, err)) return err->code;
  lw_crashpoint(4);
  lw_crashpoint(6);
  for (int i = 0; i < j->ntrash; i++) {
    int64_t o = j->trash[i].o, s = j->trash[i].dash;
    const char *nn = j->trash[i].name;
    unsigned char h[TAR_BLOCK];
    if (lw_pr(w->fd, h, TAR_BLOCK, o, w->path, err)) return err->code;
    if (strncmp((const char *)h, ".trash/", 7) != 0) {
      if (tar_rename(h, nn, err) || lw_pw(w->fd, h, TAR_BLOCK, o, w->path, err)) return err->code;
    }
    static unsigned char dashes[65536];
    if (!dashes[0]) memset(dashes, '-', sizeof dashes);
    for (int64_t k = 0; k < s; k += (int64_t)sizeof dashes) {
      size_t n = s - k < (int64_t)sizeof dashes ? (size_t)(s - k) : sizeof dashes;
      if (lw_pw(w->fd, dashes, n, o + TAR_BLOCK + k, w->path, err)) return err->code;
    }
    lw_crashpoint(7);
  }
  if (lw_sync_fd(w->fd, w->path, err)) return err->code;
  lw_drop_journal(w);
  return VD_OK;
}

/* The one wording for a journal that recovery will not act on. */
static vd_code journal_refused(lindi_writer *w, const char *why, vd_err *err) {
  return vd_fail(err, VD_INVALID,
                 "%s: not a journal of this archive's last transaction (%s); nothing was changed. If no vdsql writer "
                 "was interrupted on %s, remove the journal",
                 w->journal, why, w->path);
}

/* Reads the journal whole (a commit that trashes many members writes a large one) and
 * checks that it is one of ours, for this file: *found 0 when there is none. */
static vd_code read_journal(lindi_writer *w, lindi_journal *j, int *found, vd_err *err) {
  *found = 0;
  int fd = open(w->journal, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) return VD_OK;
  if (fd < 0 && errno == ELOOP) return journal_refused(w, "it is a symbolic link", err);
  if (fd < 0) return lw_sys_fail(err, w->journal, "cannot open the journal");
  struct stat st, ast;
  vd_buf b = {0};
  vd_code rc = VD_OK;
  if (fstat(fd, &st) || fstat(w->fd, &ast)) rc = lw_sys_fail(err, w->journal, "cannot stat");
  else if (!S_ISREG(st.st_mode)) rc = journal_refused(w, "not a regular file", err);
  else if (st.st_size > w->ctx->cfg.max_alloc) rc = journal_refused(w, "larger than max_alloc", err);
  else if (vd_buf_reserve(&b, (size_t)st.st_size + 1)) rc = vd_nomem(err);
  else if (!(rc = lw_pr(fd, b.data, (size_t)st.st_size, 0, w->journal, err)))
    b.len = (size_t)st.st_size;
  close(fd);
  if (!rc) {
    const char *why = lindi_journal_parse((const char *)b.data, b.len, (uint64_t)ast.st_dev, (uint64_t)ast.st_ino,
                                          ast.st_size, j);
    if (why) rc = journal_refused(w, why, err);
    else *found = 1;
  }
  vd_buf_free(&b);
  return rc;
}

/* A journal left by a crash: roll forward when its commit write reached the file,
 * otherwise back. Called with the lock held. Acts only when the journal proves it is
 * this archive's and the archive is in the state it started from or committed. */
vd_code lw_recover(lindi_writer *w, vd_err *err) {
  lindi_journal j;
  int found;
  if (read_journal(w, &j, &found, err)) return err->code;
  if (!found) return VD_OK;
  unsigned char entry[LINDI_ENTRY_SIZE];
  vd_code rc = lw_pr(w->fd, entry, sizeof entry, 512, w->path, err);
  /* a journal with the commit was written after every byte the commit needs was synced:
   * the transaction is committed, whatever of lw_finish ran */
  int forward = j.has_commit;
  /* the archive must be where the journal says: as the transaction found it, or (rolling
   * forward) with the commit written and maybe the new entry too */
  if (!rc) {
    int known = memcmp(entry, j.entry_before, LINDI_ENTRY_SIZE) == 0 ||
                (forward && j.commit_at == 512 && j.commit_len == LINDI_ENTRY_SIZE &&
                 memcmp(entry, j.commit, LINDI_ENTRY_SIZE) == 0) ||
                (forward && j.has_entry && memcmp(entry, j.entry, LINDI_ENTRY_SIZE) == 0);
    if (!known)
      rc = journal_refused(w, "the archive's .tar_entry.json is in neither the state it began from nor the one it committed",
                           err);
  }
  if (!rc && forward)
    rc = lw_finish(w, &j, err);
  else if (!rc && !(rc = lw_cut_back(w, j.end, err)))
    lw_drop_journal(w);
  lindi_journal_free(&j);
  return rc;
}
