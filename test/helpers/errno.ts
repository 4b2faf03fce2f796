/** The system errors a write meets most, and the words an output error names each with. */
export const WRITE_ERRNO_WORDS = [
  ['ENOSPC', 'disk full'],
  ['EDQUOT', 'quota exceeded'],
  ['EROFS', 'read-only file system'],
  ['EACCES', 'permission denied'],
  ['EPERM', 'permission denied'],
  ['EIO', 'I/O error'],
  ['EMFILE', 'too many open files'],
  ['ENAMETOOLONG', 'file name too long'],
] as const;
