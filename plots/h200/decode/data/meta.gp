# written by build/report data; strings from the data are single-quoted (gp_quote)
run = 'results/h200/decode/20261203T204130Z.csv'
run_id = '20261203T204130Z'
gpu = 'h200'
gpu_name = 'NVIDIA H200'
mode = 'cold'
grid_shape = 'batch = tokens / S (per panel), heads per panel, bf16'
grid_note = 'batch = tokens / S (per panel), heads per panel, bf16, cold mode, burst, init=normal'
kinds_note = 'burst, init=normal'
kinds_note_all = 'burst, init=normal'
figure_page = 1
figure_pages = 1
npanels = 14
array panel_file[14] = ['plots/h200/decode/data/panel_H32_KV8_D64_causal_q1.dat', 'plots/h200/decode/data/panel_H16_KV1_D128_causal_q1.dat', 'plots/h200/decode/data/panel_H32_KV8_D128_causal_q1.dat', 'plots/h200/decode/data/panel_H32_KV8_D128_causal_varlen-uniform-0-1_q1.dat', 'plots/h200/decode/data/panel_H64_KV8_D128_causal_q1.dat', 'plots/h200/decode/data/panel_H32_KV8_D128_causal_q1_b1.dat', 'plots/h200/decode/data/panel_H32_KV8_D128_causal_q1_page16.dat', 'plots/h200/decode/data/panel_H32_KV8_D128_causal_varlen-uniform-0-1_q1_page16.dat', 'plots/h200/decode/data/panel_H32_KV8_D128_causal_q1_page16_b1.dat', 'plots/h200/decode/data/panel_H32_KV8_D128_causal_q1_page128.dat', 'plots/h200/decode/data/panel_H32_KV8_D128_causal_q1_page128_b1.dat', 'plots/h200/decode/data/panel_H32_KV8_D128_causal_q4.dat', 'plots/h200/decode/data/panel_H32_KV8_D128_causal_q4_page16.dat', 'plots/h200/decode/data/panel_H32_KV8_D128_causal_q4_page128.dat']
array panel_title[14] = ['H=32 KV=8 Q=1, D=64, causal', 'H=16 KV=1 (MQA) Q=1, D=128, causal', 'H=32 KV=8 Q=1, D=128, causal', 'H=32 KV=8 Q=1, D=128, causal, varlen uniform:0.1', 'H=64 KV=8 Q=1, D=128, causal', 'H=32 KV=8 Q=1, D=128, causal, batch 1', 'H=32 KV=8 Q=1, D=128, causal, pages of 16', 'H=32 KV=8 Q=1, D=128, causal, varlen uniform:0.1, pages of 16', 'H=32 KV=8 Q=1, D=128, causal, pages of 16, batch 1', 'H=32 KV=8 Q=1, D=128, causal, pages of 128', 'H=32 KV=8 Q=1, D=128, causal, pages of 128, batch 1', 'H=32 KV=8 Q=4, D=128, causal', 'H=32 KV=8 Q=4, D=128, causal, pages of 16', 'H=32 KV=8 Q=4, D=128, causal, pages of 128']
nvariants = 5
array variant_name[5] = ['flash_decode', 'torch_sdpa_cudnn', 'fa4', 'cudnn_sdpa', 'inplace']
npeers = 1
array variant_peer[5] = [0, 1, 0, 0, 0]
array variant_dash[5] = ['solid', '(12, 6)', 'solid', 'solid', 'solid']
array variant_rgb[5] = ['#88ccee', '#00674b', '#ddcc77', '#009e73', '#e69f00']
array variant_pt[5] = [9, 8, 5, 9, 5]
array variant_pt_filled[5] = [9, 9, 5, 9, 5]
array variant_pt_open[5] = [8, 8, 4, 8, 4]
array variant_ps[5] = [1.1, 1.2, 1.0, 1.1, 1.0]
have_cudnn = 1
have_naive = 0
seq_min = 1024
seq_max = 131072
seq_pad = 0.4
array panel_n_ms[14] = [20, 20, 40, 4, 20, 10, 16, 3, 4, 16, 4, 40, 16, 16]
array legend_ms[5] = [1, 1, 1, 1, 1]
array panel_n_tflops[14] = [20, 20, 40, 4, 20, 10, 16, 3, 4, 16, 4, 40, 16, 16]
array legend_tflops[5] = [1, 1, 1, 1, 1]
array panel_n_mem[14] = [20, 20, 40, 4, 20, 10, 16, 3, 4, 16, 4, 40, 16, 16]
array legend_mem[5] = [1, 1, 1, 1, 1]
array panel_n_naive[14] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
array legend_naive[5] = [0, 0, 0, 0, 0]
array panel_n_energy[14] = [20, 20, 40, 4, 20, 10, 16, 3, 4, 16, 4, 40, 16, 16]
array legend_energy[5] = [1, 1, 1, 1, 1]
have_energy = 1
headline_n = 4
array headline_show[5] = [1, 1, 1, 0, 1]
array panel_n_headline[14] = [16, 16, 32, 3, 16, 8, 12, 2, 3, 12, 3, 32, 12, 12]
array legend_headline[5] = [1, 1, 1, 0, 1]
headline_ymin = -0.40647
headline_ymax = 4.78411
headline_note = ''
headline_bars = 1
array panel_bars[14] = ['1 2 3 5', '1 2 3 5', '1 2 3 5', '1 2 3', '1 2 3 5', '1 2 3 5', '1 3 5', '1 3', '1 3 5', '1 3 5', '1 3 5', '1 2 3 5', '1 3 5', '1 3 5']
headline_how = 'interleaved ratios: Hodges–Lehmann of the samples, bars the 98 % interval (bounds at 99 %, the gate'."'".'s)'
headline_level = '98 %'
label_w = 0.07
label_h = 0.05
peak_tflops = NaN
tflops_max = 70.437
mem_unit = 'GiB'
mem_per_unit = 1024
mem_max = 2274.12
mem_note = 'on the zero line: flash_decode, cudnn_sdpa (at most 4.03 MiB at any S)'
have_torch = 1
array panel_n_torch[14] = [16, 16, 32, 3, 16, 8, 0, 0, 0, 0, 0, 32, 0, 0]
array legend_torch[5] = [1, 0, 1, 1, 1]
torch_ymax = 6.06623
torch_note = 'fastest PyTorch peer: torch_sdpa_cudnn at all 31 points'
have_ratio = 0
baseline = ''
ratio_why = 'no baseline given'
have_decode = 1
peak_read_gbps = NaN
bw_gbps_max = 4416.18
bw_seq_min = 1024
bw_seq_max = 131072
bw_grid_note = 'batch = tokens / S (per panel), heads per panel, bf16, cold mode, burst, init=normal'
array panel_n_bandwidth[14] = [20, 20, 40, 4, 20, 10, 16, 3, 4, 16, 4, 40, 16, 16]
array legend_bandwidth[5] = [1, 1, 1, 1, 1]
nbw_panels = 14
array bw_panel_file[14] = ['plots/h200/decode/data/panel_H32_KV8_D64_causal_q1.dat', 'plots/h200/decode/data/panel_H16_KV1_D128_causal_q1.dat', 'plots/h200/decode/data/panel_H32_KV8_D128_causal_q1.dat', 'plots/h200/decode/data/panel_H32_KV8_D128_causal_varlen-uniform-0-1_q1.dat', 'plots/h200/decode/data/panel_H64_KV8_D128_causal_q1.dat', 'plots/h200/decode/data/panel_H32_KV8_D128_causal_q1_b1.dat', 'plots/h200/decode/data/panel_H32_KV8_D128_causal_q1_page16.dat', 'plots/h200/decode/data/panel_H32_KV8_D128_causal_varlen-uniform-0-1_q1_page16.dat', 'plots/h200/decode/data/panel_H32_KV8_D128_causal_q1_page16_b1.dat', 'plots/h200/decode/data/panel_H32_KV8_D128_causal_q1_page128.dat', 'plots/h200/decode/data/panel_H32_KV8_D128_causal_q1_page128_b1.dat', 'plots/h200/decode/data/panel_H32_KV8_D128_causal_q4.dat', 'plots/h200/decode/data/panel_H32_KV8_D128_causal_q4_page16.dat', 'plots/h200/decode/data/panel_H32_KV8_D128_causal_q4_page128.dat']
array bw_panel_title[14] = ['H=32 KV=8 Q=1, D=64, causal', 'H=16 KV=1 (MQA) Q=1, D=128, causal', 'H=32 KV=8 Q=1, D=128, causal', 'H=32 KV=8 Q=1, D=128, causal, varlen uniform:0.1', 'H=64 KV=8 Q=1, D=128, causal', 'H=32 KV=8 Q=1, D=128, causal, batch 1', 'H=32 KV=8 Q=1, D=128, causal, pages of 16', 'H=32 KV=8 Q=1, D=128, causal, varlen uniform:0.1, pages of 16', 'H=32 KV=8 Q=1, D=128, causal, pages of 16, batch 1', 'H=32 KV=8 Q=1, D=128, causal, pages of 128', 'H=32 KV=8 Q=1, D=128, causal, pages of 128, batch 1', 'H=32 KV=8 Q=4, D=128, causal', 'H=32 KV=8 Q=4, D=128, causal, pages of 16', 'H=32 KV=8 Q=4, D=128, causal, pages of 128']
