interface WalletsTable {
  user_id: string;
  balance_micros: number; // millionths of the currency unit; integers keep sums exact
  currency: string;
  updated_at: string;
}

export interface WalletLedgerTable {
  id: string;
  user_id: string;
  amount_micros: number; // positive credit, negative debit
  reason: string;
  reference: string | null;
  created_at: string;
}

export interface WalletTables {
  wallets: WalletsTable;
  wallet_ledger: WalletLedgerTable;
}
