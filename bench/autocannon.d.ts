// The part of autocannon's result the broker benchmark reads (the package ships no types).
declare module 'autocannon' {
  export interface Result {
    requests: { average: number; total: number };
    latency: { p50: number; p99: number };
    non2xx: number;
    errors: number;
    timeouts: number;
  }
  export default function autocannon(options: {
    url: string;
    connections: number;
    duration: number;
    headers?: Record<string, string>;
  }): Promise<Result>;
}
