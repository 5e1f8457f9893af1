/** Kubernetes name rules, with messages that say what is allowed. */

const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Checks a DNS-1035 label (lowercase alphanumerics and '-', starting with a letter, ending
 * alphanumeric) of at most `maxLength` characters; returns what is wrong, or undefined.
 */
export function dns1035LabelProblem(value: string, maxLength = 63): string | undefined {
  if (value.length === 0) return 'must not be empty';
  if (value.length > maxLength) return `${JSON.stringify(value)} is ${value.length} characters; at most ${maxLength} are allowed`;
  if (!DNS1035_LABEL.test(value)) {
    return `${JSON.stringify(value)} is not a DNS-1035 label: use lowercase letters, digits and '-', start with a letter and end with a letter or digit`;
  }
  return undefined;
}

/** Checks a DNS-1123 label (like DNS-1035 but may start with a digit); returns what is wrong, or undefined. */
export function dns1123LabelProblem(value: string, maxLength = 63): string | undefined {
  if (value.length === 0) return 'must not be empty';
  if (value.length > maxLength) return `${JSON.stringify(value)} is ${value.length} characters; at most ${maxLength} are allowed`;
  if (!DNS1123_LABEL.test(value)) {
    return `${JSON.stringify(value)} is not a DNS-1123 label: use lowercase letters, digits and '-', and start and end with a letter or digit`;
  }
  return undefined;
}

/** Checks a DNS-1123 subdomain (dot-separated DNS-1123 labels, at most 253 characters); returns what is wrong, or undefined. */
export function dns1123SubdomainProblem(value: string): string | undefined {
  if (value.length === 0) return 'must not be empty';
  if (value.length > 253) return `${JSON.stringify(value)} is ${value.length} characters; at most 253 are allowed`;
  if (!value.split('.').every((part) => DNS1123_LABEL.test(part))) {
    return `${JSON.stringify(value)} is not a DNS-1123 subdomain: use lowercase letters, digits, '-' and '.', and start and end each part with a letter or digit`;
  }
  return undefined;
}
